CREATE TABLE "app_conversation_start_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"created_by_user_id" text,
	"status" text NOT NULL,
	"detail" text,
	"failure" text,
	"conversation_id" text NOT NULL,
	"sandbox_id" text,
	"agent_server_url" text,
	"request" jsonb NOT NULL,
	"secrets" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app_conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"created_by_user_id" text,
	"sandbox_id" text NOT NULL,
	"title" text,
	"llm_model" text,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"selected_repository" text,
	"selected_branch" text,
	"git_provider" text,
	"trigger" text,
	"pr_number" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "start_tasks_created_at_idx" ON "app_conversation_start_tasks" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "start_tasks_status_idx" ON "app_conversation_start_tasks" USING btree ("status");--> statement-breakpoint
CREATE INDEX "app_conversations_created_at_idx" ON "app_conversations" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "app_conversations_updated_at_idx" ON "app_conversations" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "app_conversations_sandbox_idx" ON "app_conversations" USING btree ("sandbox_id");