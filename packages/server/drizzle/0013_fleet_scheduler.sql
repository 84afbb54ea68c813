CREATE TABLE "health_checks" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"invocation_id" integer NOT NULL,
	"board_selector" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"interval_s" integer NOT NULL,
	"expect" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "maintenance" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "health" text DEFAULT 'unknown' NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "health_reason" text;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "health_checked_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "idle_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "board_selector" jsonb;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "priority" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "queue_deadline" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "assigned_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "health_check_id" integer;--> statement-breakpoint
ALTER TABLE "health_checks" ADD CONSTRAINT "health_checks_invocation_id_invocations_id_fk" FOREIGN KEY ("invocation_id") REFERENCES "public"."invocations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operations" ADD CONSTRAINT "operations_health_check_id_health_checks_id_fk" FOREIGN KEY ("health_check_id") REFERENCES "public"."health_checks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "boards_labels_idx" ON "boards" USING gin ("labels");--> statement-breakpoint
CREATE INDEX "operations_waiting_idx" ON "operations" USING btree ("priority" desc,"id") WHERE "operations"."status" = 'queued' and "operations"."board_id" is null;--> statement-breakpoint
CREATE INDEX "operations_health_check_idx" ON "operations" USING btree ("health_check_id","board_id","id");--> statement-breakpoint
CREATE INDEX "operations_waiting_selector_idx" ON "operations" USING btree ("board_selector") WHERE "operations"."status" = 'queued' and "operations"."board_id" is null and "operations"."board_selector" is not null;