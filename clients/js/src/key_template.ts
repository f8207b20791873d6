// Key templates: "payment:{orderId}" names the lock of one order. Each {name} (or {a.b} for a
// nested field) is filled from the parameter object of the call; "{{" and "}}" are literal
// braces. A template is checked once, when it is declared; a value that is missing, or is not
// a string, number, bigint or boolean, refuses the call rather than lock the wrong key.
import { invalidArgument } from "./errors.js";

type Part = string | { path: string[]; name: string };

export type KeyTemplate = (params: unknown) => string;

const NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

export function compileKeyTemplate(pattern: string): KeyTemplate {
  if (typeof pattern !== "string" || pattern === "") throw invalidArgument("key", "a lock key template must be a non-empty string");
  const parts: Part[] = [];
  let text = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if ((c === "{" || c === "}") && pattern[i + 1] === c) {
      text += c;
      i += 1;
    } else if (c === "{") {
      const close = pattern.indexOf("}", i);
      const name = close < 0 ? "" : pattern.slice(i + 1, close);
      if (!NAME.test(name))
        throw invalidArgument("key", `bad key template '${pattern}': '{' at ${i} does not start a {name} placeholder`);
      if (text !== "") parts.push(text);
      text = "";
      parts.push({ path: name.split("."), name });
      i = close;
    } else if (c === "}") {
      throw invalidArgument("key", `bad key template '${pattern}': unmatched '}' at ${i} (write '}}' for a brace)`);
    } else {
      text += c;
    }
  }
  if (text !== "") parts.push(text);

  return (params: unknown) => {
    let key = "";
    for (const part of parts) {
      if (typeof part === "string") {
        key += part;
        continue;
      }
      let value: unknown = params;
      for (const step of part.path) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[step] : undefined;
      if (typeof value === "string" || typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
        key += String(value);
      } else if (value === undefined || value === null) {
        throw invalidArgument("key", `key template '${pattern}' needs ${part.name}, which the call's parameters do not have`);
      } else {
        throw invalidArgument("key", `key template '${pattern}': ${part.name} is a ${typeof value}, not a string or number`);
      }
    }
    return key;
  };
}
