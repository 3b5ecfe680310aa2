ALTER TABLE "engines" ADD COLUMN "docker_identity" text;--> statement-breakpoint
ALTER TABLE "engines" ADD CONSTRAINT "engines_docker_identity_unique" UNIQUE("docker_identity");