CREATE TABLE "adopted_installations" (
	"installation" text PRIMARY KEY NOT NULL,
	"adopted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "installation" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Drawn once, here, so that replicas starting together on a new database read one id.
INSERT INTO "installation" ("id") VALUES (gen_random_uuid()::text);
