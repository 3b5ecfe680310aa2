CREATE TABLE "engines" (
	"name" text PRIMARY KEY NOT NULL,
	"docker_url" text NOT NULL,
	"advertise_host" text NOT NULL,
	"max_sandboxes" integer,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" text DEFAULT 'ACTIVE' NOT NULL,
	"health" text,
	"health_detail" text,
	"last_seen_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Rows from before the fleet ran on this machine's engine: it becomes the engine "local" (its URL is
-- set at start when DOCKER_ENGINES is unset), registered only when something already runs on it.
INSERT INTO "engines" ("name", "docker_url", "advertise_host") SELECT 'local', 'unix:///var/run/docker.sock', '127.0.0.1' WHERE EXISTS (SELECT 1 FROM "sandboxes") OR EXISTS (SELECT 1 FROM "snapshots");--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "engine_labels" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "engine" text NOT NULL DEFAULT 'local';--> statement-breakpoint
ALTER TABLE "sandboxes" ALTER COLUMN "engine" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD COLUMN "host_address" text;--> statement-breakpoint
UPDATE "sandboxes" SET "host_address" = '127.0.0.1' WHERE "host_ports" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "snapshots" ADD COLUMN "engine" text NOT NULL DEFAULT 'local';--> statement-breakpoint
ALTER TABLE "snapshots" ALTER COLUMN "engine" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "sandboxes" ADD CONSTRAINT "sandboxes_engine_engines_name_fk" FOREIGN KEY ("engine") REFERENCES "public"."engines"("name") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "snapshots" ADD CONSTRAINT "snapshots_engine_engines_name_fk" FOREIGN KEY ("engine") REFERENCES "public"."engines"("name") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sandboxes_engine_live_idx" ON "sandboxes" USING btree ("engine") WHERE "sandboxes"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "snapshots_engine_idx" ON "snapshots" USING btree ("engine");