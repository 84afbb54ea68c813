CREATE TABLE "rollout_boards" (
	"rollout_id" integer NOT NULL,
	"position" integer NOT NULL,
	"board_id" uuid,
	"board_name" text NOT NULL,
	"phase" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"claimed_by" text,
	"claimed_at" timestamp (3) with time zone,
	"operation_id" integer,
	"run_ms" integer,
	"metrics" jsonb,
	"finished_at" timestamp (3) with time zone,
	CONSTRAINT "rollout_boards_rollout_id_position_pk" PRIMARY KEY("rollout_id","position")
);
--> statement-breakpoint
CREATE TABLE "rollouts" (
	"id" serial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"board_selector" jsonb NOT NULL,
	"invocation_id" integer,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"batch_size" integer,
	"batch_interval_s" integer DEFAULT 0 NOT NULL,
	"abort" jsonb,
	"phases_started" integer DEFAULT 0 NOT NULL,
	"phase_ended_at" timestamp (3) with time zone,
	"created_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "rollout_boards" ADD CONSTRAINT "rollout_boards_rollout_id_rollouts_id_fk" FOREIGN KEY ("rollout_id") REFERENCES "public"."rollouts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_boards" ADD CONSTRAINT "rollout_boards_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_boards" ADD CONSTRAINT "rollout_boards_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollouts" ADD CONSTRAINT "rollouts_invocation_id_invocations_id_fk" FOREIGN KEY ("invocation_id") REFERENCES "public"."invocations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rollout_boards_operation_idx" ON "rollout_boards" USING btree ("operation_id");--> statement-breakpoint
CREATE INDEX "rollouts_status_idx" ON "rollouts" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "rollouts_kind_idx" ON "rollouts" USING btree ("kind","id");