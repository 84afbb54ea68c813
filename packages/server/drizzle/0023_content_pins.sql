CREATE TABLE "content_pins" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sha256" text NOT NULL,
	"replica_id" text NOT NULL,
	"pinned_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "content_pins_sha256_idx" ON "content_pins" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "content_pins_replica_idx" ON "content_pins" USING btree ("replica_id");