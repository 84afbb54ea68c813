CREATE TABLE "provisioning_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"max_boards" integer,
	"enrolled_count" integer DEFAULT 0 NOT NULL,
	"approval" text DEFAULT 'auto' NOT NULL,
	"created_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "provisioning_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "labels" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "pending" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "machine_id" text;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "provisioning_key_id" uuid;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "enroll_facts" jsonb;--> statement-breakpoint
ALTER TABLE "boards" ADD CONSTRAINT "boards_provisioning_key_id_provisioning_keys_id_fk" FOREIGN KEY ("provisioning_key_id") REFERENCES "public"."provisioning_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "boards_key_machine_idx" ON "boards" USING btree ("provisioning_key_id","machine_id");