/**
 * R2's rules for the parts of one multipart object (developers.cloudflare.com/r2/objects/multipart-objects):
 * every part but the last at least 5 MiB and all of the same size, the last no larger than
 * them, at most 10,000 parts. R2 only says so when the upload is completed, after every byte
 * has been sent; checking each part as it arrives tells the caller at once, with a 422
 * naming the part.
 */
import { AppError } from "../../../http/errors";
import { MAX_OBJECT_BYTES, MAX_PART_NUMBER, MIN_PART_BYTES } from "./schema";

export type PartSize = {
  part_number: number;
  size: number;
};

const refuse = (path: string, message: string) =>
  new AppError("validation_failed", `${path}: ${message}`, { errors: [{ path, message }] });

/** Why `parts` (sorted by number, the last one final) cannot make an object, or null when they can. */
export function layoutProblem(parts: PartSize[]): string | null {
  const last = parts[parts.length - 1];
  if (!last) return "an object needs at least one part";
  const full = parts[0]!.size;
  for (const p of parts.slice(0, -1)) {
    if (p.size < MIN_PART_BYTES)
      return (
        `part ${p.part_number} has ${p.size} bytes: every part but the last needs at least ${MIN_PART_BYTES}` +
        ` (5 MiB)`
      );
    if (p.size !== full)
      return (
        `part ${p.part_number} has ${p.size} bytes but part ${parts[0]!.part_number} has ${full}` +
        `: every part but the last must have the same size`
      );
  }
  if (parts.length > 1 && last.size > full)
    return `the last part (${last.part_number}) has ${last.size} bytes, more than the ${full} of the others`;
  return null;
}

/** The size every part but the last must have, once one such part is known (null before). */
export function partSizeOf(parts: PartSize[]): number | null {
  return parts.length > 1 ? parts[0]!.size : null;
}

/**
 * Refuses a part that no completion could use: the parts uploaded so far, with this one in (it
 * replaces one of the same number), must already follow the rule, taking the highest as the last.
 * Any subset of a valid set of parts does, so a caller sending parts in any order is never refused wrongly.
 */
export function checkPartFits(existing: PartSize[], part: PartSize): void {
  if (part.part_number > MAX_PART_NUMBER)
    throw refuse("part_number", `must be a part number from 1 to ${MAX_PART_NUMBER}`);
  if (part.size < 1) throw refuse("content_length", "a part has at least one byte");
  const parts = [...existing.filter((p) => p.part_number !== part.part_number), part].sort(
    (a, b) => a.part_number - b.part_number,
  );
  const problem = layoutProblem(parts);
  if (problem)
    throw refuse("part_number", `${problem}. Upload that part again with the right size, or abort the upload.`);
  const total = parts.reduce((sum, p) => sum + p.size, 0);
  if (total > MAX_OBJECT_BYTES)
    throw new AppError(
      "payload_too_large",
      `With this part the upload would hold ${total} bytes; an object holds at most ${MAX_OBJECT_BYTES}.`,
    );
}

/**
 * The parts a completion assembles: those named (each with the etag its upload returned), or
 * all of them; in part-number order, and following the rule with the last one final.
 */
export function selectParts<P extends PartSize & { etag: string }>(
  recorded: P[],
  named: { part_number: number; etag: string }[] | undefined,
): P[] {
  const byNumber = new Map(recorded.map((p) => [p.part_number, p]));
  const chosen = named
    ? named.map((n, i) => {
        const part = byNumber.get(n.part_number);
        if (!part) throw refuse(`parts.${i}.part_number`, `part ${n.part_number} has not been uploaded`);
        if (part.etag !== n.etag)
          throw refuse(`parts.${i}.etag`, `part ${n.part_number} has etag ${part.etag}, not ${n.etag}`);
        return part;
      })
    : [...recorded];
  chosen.sort((a, b) => a.part_number - b.part_number);
  const twice = chosen.find((p, i) => i > 0 && chosen[i - 1]!.part_number === p.part_number);
  if (twice) throw refuse("parts", `part ${twice.part_number} is named twice`);
  const problem = layoutProblem(chosen);
  if (problem) throw refuse("parts", problem);
  return chosen;
}
