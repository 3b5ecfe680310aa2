CREATE TABLE "spec_build_logs" (
	"spec_id" text PRIMARY KEY NOT NULL,
	"log" text DEFAULT '' NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "build_status" text;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "build_detail" text;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "build_cached" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "build_started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "build_finished_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "spec_build_logs" ADD CONSTRAINT "spec_build_logs_spec_id_sandbox_specs_id_fk" FOREIGN KEY ("spec_id") REFERENCES "public"."sandbox_specs"("id") ON DELETE cascade ON UPDATE no action;