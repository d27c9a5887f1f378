/** Where a clock move goes (POST /v1/sandboxes/{id}/clock): forward only, and at most MAX_ADVANCE_SECONDS. */
import { AppError } from "../../src/http/errors";
import type { ClockTarget } from "../../src/rpc/sandbox";
import { MAX_ADVANCE_SECONDS } from "../../src/sandbox/limits";

/** The moment the sandbox's clock moves to from `from` (its now), or a 422 naming the field that asked. */
export function clockTarget(input: ClockTarget, from: number): number {
  const to = "to" in input ? input.to : from + input.by;
  const field = "to" in input ? "to" : "advance_seconds";
  if (to <= from)
    throw fieldError(
      field,
      `must be after the sandbox's now (${new Date(from).toISOString()}): its clock only moves forward`,
    );
  if (to - from > MAX_ADVANCE_SECONDS * 1000)
    throw fieldError(
      field,
      `moves the clock at most ${MAX_ADVANCE_SECONDS} s (${MAX_ADVANCE_SECONDS / 86400} days) in one call`,
    );
  return to;
}

function fieldError(path: string, message: string): AppError {
  return new AppError("validation_failed", `${path} ${message}.`, { errors: [{ path, message }] });
}
