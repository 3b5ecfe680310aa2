CREATE TABLE "llm_relay_routes" (
	"conversation_id" text PRIMARY KEY NOT NULL,
	"sandbox_id" text NOT NULL,
	"token" text NOT NULL,
	"upstream" text NOT NULL,
	"public_default" boolean NOT NULL,
	"api_key" text,
	"calls" bigint DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "llm_relay_routes_token_unique" UNIQUE("token")
);
--> statement-breakpoint
ALTER TABLE "app_conversation_start_tasks" ADD COLUMN "llm_api_key" text;--> statement-breakpoint
ALTER TABLE "llm_relay_routes" ADD CONSTRAINT "llm_relay_routes_sandbox_id_sandboxes_id_fk" FOREIGN KEY ("sandbox_id") REFERENCES "public"."sandboxes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "llm_relay_routes_sandbox_idx" ON "llm_relay_routes" USING btree ("sandbox_id");