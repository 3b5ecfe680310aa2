ALTER TABLE "sandbox_specs" ADD COLUMN "warm_pool_size" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "warm_pool_fingerprint" text;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "pool_fingerprint" text;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "claimed_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "sandboxes_warm_pool_idx" ON "sandboxes" USING btree ("spec_id","pool_fingerprint") WHERE "sandboxes"."pool_fingerprint" IS NOT NULL;