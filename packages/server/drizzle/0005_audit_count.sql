ALTER TABLE "audit_events" ADD COLUMN "count" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "last_at" timestamp (3) with time zone;