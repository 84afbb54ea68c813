CREATE TABLE "baselines" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"invocation_id" integer,
	"operation_ids" jsonb NOT NULL,
	"runs" jsonb NOT NULL,
	"contexts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "baselines_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "baselines" ADD CONSTRAINT "baselines_invocation_id_invocations_id_fk" FOREIGN KEY ("invocation_id") REFERENCES "public"."invocations"("id") ON DELETE set null ON UPDATE no action;