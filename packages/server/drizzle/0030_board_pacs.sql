ALTER TABLE "boards" ADD COLUMN "pacs" jsonb;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "pacs_listed_at" timestamp (3) with time zone;