ALTER TABLE "operations" ADD COLUMN "runner_replica" text;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "cancel_requested_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "agent_start" jsonb;--> statement-breakpoint
-- Hand-written backfill: the server's own state moves out of params into the new columns.
UPDATE "operations" SET
  "runner_replica" = "params"->>'runner_replica',
  "cancel_requested_at" = CASE WHEN "params"->'cancel_requested' = 'true'::jsonb THEN now() END,
  "agent_start" = CASE WHEN "params" ? 'files' THEN jsonb_build_object('invocation_name', coalesce("params"->'invocation_name', '""'::jsonb), 'files', "params"->'files') END,
  "params" = "params" - 'runner_replica' - 'cancel_requested' - 'invocation_name' - 'files'
WHERE "params" ?| array['runner_replica', 'cancel_requested', 'invocation_name', 'files'];
