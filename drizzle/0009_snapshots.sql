CREATE TABLE "snapshots" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text,
	"sandbox_id" text NOT NULL,
	"spec_id" text NOT NULL,
	"image" text NOT NULL,
	"volume" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "snapshot_id" text;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "image" text;--> statement-breakpoint
ALTER TABLE "snapshots" ADD CONSTRAINT "snapshots_spec_id_sandbox_specs_id_fk" FOREIGN KEY ("spec_id") REFERENCES "public"."sandbox_specs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "snapshots_created_at_idx" ON "snapshots" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "snapshots_sandbox_idx" ON "snapshots" USING btree ("sandbox_id");--> statement-breakpoint
CREATE INDEX "snapshots_spec_idx" ON "snapshots" USING btree ("spec_id");--> statement-breakpoint
CREATE INDEX "sandboxes_snapshot_idx" ON "sandboxes" USING btree ("snapshot_id") WHERE "sandboxes"."snapshot_id" IS NOT NULL;