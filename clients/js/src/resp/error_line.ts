// Splits a RESP error line into code, message and details:
//   "LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=300"
// The first word is the code; the details are the trailing run of name=value words (a value
// with spaces, quotes or '=' is a JSON string); what lies between is the message.
import type { ErrorDetails } from "../errors.js";

export interface ErrorLine {
  code: string;
  message: string;
  details: ErrorDetails;
}

interface Word {
  start: number;
  detail: [string, string | number] | null;
}

// Reads one word at `at` (no leading space); returns it and where the next word starts.
function readWord(text: string, at: number): { word: Word; next: number } {
  const named = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(text.slice(at));
  if (named) {
    const valueAt = at + named[0].length;
    if (text[valueAt] === '"') {
      // A JSON string: find its closing quote, skipping escaped characters.
      let i = valueAt + 1;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      if (i < text.length) {
        try {
          const value = JSON.parse(text.slice(valueAt, i + 1)) as string;
          const end = i + 1;
          if (end === text.length || text[end] === " ")
            return { word: { start: at, detail: [named[1]!, value] }, next: end + 1 };
        } catch {
          // not JSON after all: a plain word
        }
      }
    } else {
      const end = text.indexOf(" ", valueAt);
      const raw = text.slice(valueAt, end < 0 ? text.length : end);
      const value = /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;
      return { word: { start: at, detail: [named[1]!, value] }, next: end < 0 ? text.length + 1 : end + 1 };
    }
  }
  const end = text.indexOf(" ", at);
  return { word: { start: at, detail: null }, next: end < 0 ? text.length + 1 : end + 1 };
}

export function parseErrorLine(line: string): ErrorLine {
  const space = line.indexOf(" ");
  const code = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? "" : line.slice(space + 1);
  const words: Word[] = [];
  for (let at = 0; at < rest.length; ) {
    if (rest[at] === " ") {
      at += 1;
      continue;
    }
    const { word, next } = readWord(rest, at);
    words.push(word);
    at = next;
  }
  let first = words.length;
  while (first > 0 && words[first - 1]!.detail !== null) first -= 1;
  const details: ErrorDetails = {};
  for (const w of words.slice(first)) details[w.detail![0]] = w.detail![1];
  const message = (first < words.length ? rest.slice(0, words[first]!.start) : rest).trimEnd();
  return { code, message: message || code, details };
}
