-- Custom SQL migration file, put your code below! --
-- Boards that exist before webhooks do are already known to the webhook sweep
-- (webhooks/board-sweep.ts): no board.enrolled, board.health_changed or board.offline for
-- what happened before. A board online now is reset to "not told offline" by the first sweep.
INSERT INTO "webhook_board_state" ("board_id", "pending", "health", "connected_at", "offline_notified")
SELECT "id", "pending", "health", "connected_at", true FROM "boards"
ON CONFLICT ("board_id") DO NOTHING;
