CREATE TABLE "enroll_failures" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"ip" text NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "reenroll" jsonb;--> statement-breakpoint
ALTER TABLE "rollouts" ADD COLUMN "left_out" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "enroll_failures_ip_idx" ON "enroll_failures" USING btree ("ip","at");--> statement-breakpoint
CREATE INDEX "enroll_failures_at_idx" ON "enroll_failures" USING btree ("at");