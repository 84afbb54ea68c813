ALTER TABLE "invocation_files" ADD COLUMN "model" jsonb;--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "requires_app" text;