ALTER TABLE "sandboxes" ADD COLUMN "restart_generation" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "observed_generation" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "agent_server_version" text;