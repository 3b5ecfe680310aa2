ALTER TABLE "sandbox_specs" ADD COLUMN "disk_mb" integer;--> statement-breakpoint
-- No spec could ask for unlimited disk before this column: each gets SANDBOX_DEFAULT_DISK_MB's default.
UPDATE "sandbox_specs" SET "disk_mb" = 10240;
