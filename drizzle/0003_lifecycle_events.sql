CREATE TABLE "lifecycle_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"sandbox_id" text,
	"previous_status" text,
	"status" text,
	"status_detail" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "lifecycle_events_sandbox_idx" ON "lifecycle_events" USING btree ("sandbox_id","id");--> statement-breakpoint
CREATE INDEX "lifecycle_events_created_at_idx" ON "lifecycle_events" USING btree ("created_at");