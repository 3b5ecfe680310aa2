CREATE TABLE "sandbox_specs" (
	"id" text PRIMARY KEY NOT NULL,
	"image" text NOT NULL,
	"command" jsonb,
	"initial_env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"working_dir" text NOT NULL,
	"exposed_ports" jsonb NOT NULL,
	"cpus" real,
	"memory_mb" integer,
	"pids_limit" integer,
	"idle_pause_seconds" integer,
	"ttl_seconds" integer,
	"resume_on_access" boolean DEFAULT true NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sandboxes" (
	"id" text PRIMARY KEY NOT NULL,
	"spec_id" text NOT NULL,
	"created_by_user_id" text,
	"desired_state" text NOT NULL,
	"status" text NOT NULL,
	"status_detail" text,
	"session_api_key" text NOT NULL,
	"container_id" text,
	"host_ports" jsonb,
	"last_active_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "sandboxes" ADD CONSTRAINT "sandboxes_spec_id_sandbox_specs_id_fk" FOREIGN KEY ("spec_id") REFERENCES "public"."sandbox_specs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sandboxes_created_at_idx" ON "sandboxes" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "sandboxes_live_idx" ON "sandboxes" USING btree ("status") WHERE "sandboxes"."deleted_at" IS NULL;