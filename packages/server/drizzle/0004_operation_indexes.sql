CREATE INDEX "operations_expiry_idx" ON "operations" USING btree (coalesce("finished_at", "created_at"));--> statement-breakpoint
CREATE INDEX "operations_status_idx" ON "operations" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "operations_kind_idx" ON "operations" USING btree ("kind","id");