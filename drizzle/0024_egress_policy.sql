ALTER TABLE "sandbox_specs" ADD COLUMN "egress" jsonb DEFAULT '{"allow":[],"deny":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "egress" jsonb;