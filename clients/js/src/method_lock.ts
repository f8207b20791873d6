// One function that is a TypeScript method decorator (TC39 decorators of TypeScript 5, and the
// older experimentalDecorators form) and a plain higher-order function for JavaScript:
//
//   @client.locked("task:{taskId}") async moveTask(params) {...}          // decorator
//   const moveTask = client.locked("task:{taskId}")(async (params) => {...})  // wrapper
//
// It tells the three apart by their arguments: (fn), (method, context) or (target, name,
// descriptor). The wrapped function keeps `this` and its arguments.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AsyncFunction = (...args: any[]) => Promise<any>;

/** A decorator for async methods, or a wrapper for async functions (see client.locked). */
export interface MethodLock {
  /** Wraps an async function. */
  <F extends AsyncFunction>(fn: F): F;
  /** Decorates an async method (TypeScript 5 decorators). */
  <F extends AsyncFunction>(method: F, context: ClassMethodDecoratorContext): F;
  /** Decorates an async method (`experimentalDecorators`). */
  (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor;
}

/** `around(thisArg, args, run)` runs `run()` (the original call) inside whatever it guards. */
export type Around = (thisArg: unknown, args: unknown[], run: () => Promise<unknown>) => Promise<unknown>;

export function methodLock(around: Around): MethodLock {
  const wrap = (fn: AsyncFunction): AsyncFunction =>
    async function (this: unknown, ...args: unknown[]) {
      return around(this, args, () => fn.apply(this, args));
    };
  return function (first: unknown, second?: unknown, third?: unknown): unknown {
    if (third !== undefined || typeof second === "string" || typeof second === "symbol") {
      const descriptor = third as PropertyDescriptor | undefined;
      if (descriptor === undefined || typeof descriptor.value !== "function")
        throw new TypeError("a lock decorator applies to methods only");
      descriptor.value = wrap(descriptor.value as AsyncFunction);
      return descriptor;
    }
    if (second !== undefined) {
      const context = second as { kind?: unknown };
      if (context.kind !== "method" || typeof first !== "function")
        throw new TypeError(`a lock decorator applies to methods only, not to a ${String(context.kind)}`);
      return wrap(first as AsyncFunction);
    }
    if (typeof first !== "function") throw new TypeError("expected an async function to wrap");
    return wrap(first as AsyncFunction);
  } as MethodLock;
}
