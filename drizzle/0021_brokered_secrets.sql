CREATE TABLE "brokered_secrets" (
	"placeholder" text PRIMARY KEY NOT NULL,
	"sandbox_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"name" text NOT NULL,
	"value" text NOT NULL,
	"hosts" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "installation_ca" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"cert_pem" text NOT NULL,
	"key_pem" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "installation_ca_one_row" CHECK ("installation_ca"."id")
);
--> statement-breakpoint
ALTER TABLE "sandbox_specs" ADD COLUMN "secret_hosts" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "brokered_secrets_sandbox_idx" ON "brokered_secrets" USING btree ("sandbox_id");