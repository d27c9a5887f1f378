/** counters: atomic counters with bounds and reset windows (Redis INCR, semaphores, budgets). */
import { noInput } from "../../../openapi/schemas";
import { AppError } from "../../../http/errors";
import { kindOf } from "../../../kind/kind";
import { current, init, view, write } from "./store";
import { compareAndSetInput, counterConfig, counterValue, setInput, stepInput, type CounterConfig } from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD, $0.0001 per operation

const kind = kindOf<CounterConfig>();

export const counters = kind.define({
  kind: "counters",
  family: "memory",
  title: "Counter",
  summary: "Atomic counter: increment, decrement, set, compare-and-set, optional bounds and reset window.",
  createSchema: counterConfig,
  example: { initial: 0, min: 0, max: 100, label: "API calls this hour", reset_every_seconds: 3600 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  init,
  usage: (store, config) => ({ value: current(store, config) }),
  exportData: (store, config) => view(store, config),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Read the counter",
      priceMicro: OP_PRICE,
      input: noInput,
      output: counterValue,
      run: (store, config) => view(store, config),
    }),
    kind.op({
      name: "increment",
      method: "post",
      path: "/increment",
      summary: "Add to the counter",
      priceMicro: OP_PRICE,
      input: stepInput,
      output: counterValue,
      errors: [409],
      example: { input: { by: 2 } },
      run: (store, config, input) => write(store, config, current(store, config) + input.by),
    }),
    kind.op({
      name: "decrement",
      method: "post",
      path: "/decrement",
      summary: "Subtract from the counter",
      priceMicro: OP_PRICE,
      input: stepInput,
      output: counterValue,
      errors: [409],
      example: { input: { by: 1 }, after: ["increment"] },
      run: (store, config, input) => write(store, config, current(store, config) - input.by),
    }),
    kind.op({
      name: "set",
      method: "put",
      path: "",
      summary: "Set the counter",
      priceMicro: OP_PRICE,
      input: setInput,
      output: counterValue,
      errors: [409],
      example: { input: { value: 42 } },
      run: (store, config, input) => write(store, config, input.value),
    }),
    kind.op({
      name: "compare_and_set",
      method: "post",
      path: "/compare-and-set",
      summary: "Set the counter only if it holds the expected value",
      priceMicro: OP_PRICE,
      input: compareAndSetInput,
      output: counterValue,
      errors: [409],
      example: { input: { expected: 0, value: 10 } },
      run: (store, config, input) => {
        const value = current(store, config);
        if (value !== input.expected)
          throw new AppError("conflict", `The counter holds ${value}, not ${input.expected}.`);
        return write(store, config, input.value);
      },
    }),
  ],
});
