CREATE TABLE "installation_settings" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"warm_pool_size" integer NOT NULL,
	"memory_mb" integer NOT NULL,
	"pids_limit" integer NOT NULL,
	"cpus" real NOT NULL,
	"disk_mb" integer NOT NULL,
	"runtime" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "installation_settings_one_row" CHECK ("installation_settings"."id")
);
