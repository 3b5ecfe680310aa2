ALTER TABLE "engines" ADD COLUMN "moved_sandboxes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "movable" boolean DEFAULT true NOT NULL;