ALTER TABLE "sessions" ALTER COLUMN "user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "api_token_id" uuid;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "env_token_hash" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_api_token_id_api_tokens_id_fk" FOREIGN KEY ("api_token_id") REFERENCES "public"."api_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_api_token_idx" ON "sessions" USING btree ("api_token_id");--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_owner" CHECK ("sessions"."user_id" IS NOT NULL OR "sessions"."env_token_hash" IS NOT NULL);