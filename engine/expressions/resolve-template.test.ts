import { describe, expect, it } from "vitest";
import type { ExpressionContext, TaskView, WorkflowView } from "./expression-context";
import { MAX_INTERPOLATED_LENGTH, resolveTemplate, resolveTemplateIn } from "./resolve-template";

const workflow: WorkflowView = {
  workflowId: "wf-1",
  workflowType: "order_flow",
  version: 3,
  status: "RUNNING",
  startTime: 1_700_000_000_000,
  correlationId: "corr-9",
  input: {
    orderId: "o-1",
    qty: 2,
    price: 9.5,
    paid: true,
    none: null,
    tags: ["a", "b"],
    customer: { name: "Ann", "home town": "Oslo" },
    key: "qty",
    idx: 1,
    items: [
      { sku: "x", price: 5 },
      { sku: "y", price: 15 },
    ],
    "a.b": 7,
    money: "$${not an escape in data}",
  },
  output: { done: false },
  variables: { counter: 4 },
};

const tasks: Record<string, TaskView> = {
  fetch: {
    taskId: "t-fetch",
    referenceTaskName: "fetch",
    taskType: "HTTP",
    status: "COMPLETED",
    input: { url: "https://example.test/o-1" },
    output: { status: 200, body: { ids: [10, 20, 30], next: null } },
    iteration: 0,
    retryCount: 0,
    workerId: "w-7",
  },
  charge: {
    taskId: "t-charge",
    referenceTaskName: "charge",
    taskType: "SIMPLE",
    status: "FAILED",
    input: {},
    output: {},
    iteration: 0,
    retryCount: 2,
    reasonForIncompletion: "card declined",
  },
  step: {
    taskId: "t-step",
    referenceTaskName: "step__3",
    taskType: "SIMPLE",
    status: "COMPLETED",
    input: {},
    output: { page: 3 },
    iteration: 3,
    retryCount: 0,
  },
};

function contextWith(overrides: Partial<ExpressionContext> = {}): ExpressionContext & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    workflow,
    task(ref: string) {
      lookups.push(ref);
      return tasks[ref];
    },
    lookups,
    ...overrides,
  };
}

const resolve = (template: unknown, ctx: ExpressionContext = contextWith()): unknown => resolveTemplate(template, ctx);

describe("a string that is exactly one expression keeps the value's type", () => {
  it.each<[string, unknown]>([
    ["${workflow.input.orderId}", "o-1"],
    ["${workflow.input.qty}", 2],
    ["${workflow.input.price}", 9.5],
    ["${workflow.input.paid}", true],
    ["${workflow.input.none}", null],
    ["${workflow.input.customer}", { name: "Ann", "home town": "Oslo" }],
    ["${workflow.input.tags}", ["a", "b"]],
    ["${workflow.input}", workflow.input],
    ["${ workflow.input.qty }", 2],
    ["${$.workflow.input.qty}", 2],
    ["${$['workflow']['input']['qty']}", 2],
    ["${workflow.input.customer['home town']}", "Oslo"],
    ['${workflow.input.customer["home town"]}', "Oslo"],
    ["${workflow.input['a.b']}", 7],
    ["${workflow.input.tags[0]}", "a"],
    ["${workflow.input.tags[-1]}", "b"],
    ["${workflow.input.items[1].sku}", "y"],
    ["${workflow.input.customer['name','nope']}", { name: "Ann" }],
    // The workflow's own fields.
    ["${workflow.workflowId}", "wf-1"],
    ["${workflow.correlationId}", "corr-9"],
    ["${workflow.workflowType}", "order_flow"],
    ["${workflow.version}", 3],
    ["${workflow.status}", "RUNNING"],
    ["${workflow.startTime}", 1_700_000_000_000],
    ["${workflow.parentWorkflowId}", null],
    ["${workflow.reasonForIncompletion}", null],
    ["${workflow.schemaVersion}", 2],
    ["${workflow.output.done}", false],
    ["${workflow.variables.counter}", 4],
    ["${workflow.variables}", { counter: 4 }],
    // Tasks by reference name.
    ["${fetch.output.status}", 200],
    ["${fetch.output.body.ids}", [10, 20, 30]],
    ["${fetch.output.body.ids[1]}", 20],
    ["${fetch.output.body.next}", null],
    ["${fetch.input.url}", "https://example.test/o-1"],
    ["${fetch.status}", "COMPLETED"],
    ["${fetch.taskId}", "t-fetch"],
    ["${fetch.taskType}", "HTTP"],
    ["${fetch.referenceTaskName}", "fetch"],
    ["${fetch.workerId}", "w-7"],
    ["${fetch.reasonForIncompletion}", null],
    ["${fetch.startTime}", 0],
    ["${fetch.pollCount}", 0],
    ["${charge.status}", "FAILED"],
    ["${charge.reasonForIncompletion}", "card declined"],
    ["${charge.retryCount}", 2],
    ["${step.iteration}", 3],
    ["${step.referenceTaskName}", "step__3"],
    ["${step.output.page}", 3],
  ])("%s", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("missing and malformed paths give null, never an exception", () => {
  it.each<[string, unknown]>([
    ["${workflow.input.missing}", null],
    ["${workflow.input.missing.deeper.still}", null],
    ["${workflow.input.qty.deeper}", null],
    ["${workflow.input.tags[7]}", null],
    ["${workflow.input.tags.name}", null],
    ["${workflow.nope}", null],
    ["${unknown_ref.output.x}", null],
    ["${unknown_ref}", null],
    ["${workflow.input.constructor}", null],
    ["${workflow.input.__proto__}", null],
    ["${workflow.input.bad name}", null],
    ["${workflow.input.}", null],
    ["${workflow.input[}", null],
    ["${workflow.input.items[?(@.sku =~ /x/)]}", null],
    ["${workflow.input.items.nope()}", null],
    ["${workflow.input.tags.sum()}", null],
    // Indefinite paths give a list, empty when nothing matches (Jayway).
    ["${workflow.input.missing[*]}", []],
    ["${workflow.input..missing}", []],
    ["${workflow.input.items[?(@.price > 100)]}", []],
    ["${workflow.input.items[*].price.sum()}", []],
    // The document root cannot be enumerated: only named lookups reach it.
    ["${$}", null],
    ["${$..qty}", []],
    ["${*}", []],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("JSONPath features", () => {
  it.each<[string, unknown]>([
    ["${workflow.input..price}", [9.5, 5, 15]],
    ["${workflow.input.items[*].sku}", ["x", "y"]],
    ["${workflow.input.items.*.sku}", ["x", "y"]],
    ["${workflow.input.items[?(@.price > 10)].sku}", ["y"]],
    ["${workflow.input.items[?(@.sku == 'x')]}", [{ sku: "x", price: 5 }]],
    ["${workflow.input.items[?(@.price > 1 && @.sku != 'x')].sku}", ["y"]],
    ["${workflow.input.items[?(@.price == $.workflow.input.price || @.price < $.fetch.output.status)].sku}", ["x", "y"]],
    ["${workflow.input.items[?(@.price > $.workflow.variables.counter)].sku}", ["x", "y"]],
    ["${workflow.input.items[0:1]}", [{ sku: "x", price: 5 }]],
    ["${workflow.input.items.length()}", 2],
    ["${workflow.input.customer.length()}", 2],
    ["${fetch.output.body.ids.sum()}", 60],
    ["${fetch.output.body.ids.max()}", 30],
    ["${fetch.output.body.ids.last()}", 30],
    ["${workflow.input.customer.keys()}", ["name", "home town"]],
  ])("%s", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("nested expressions resolve innermost first", () => {
  it.each<[string, unknown]>([
    ["${workflow.input.${workflow.input.key}}", 2],
    ["${fetch.output.body.ids[${workflow.input.idx}]}", 20],
    ["${workflow.input.items[${workflow.input.idx}].sku}", "y"],
    ["${fetch.output.body.ids[${workflow.input.items[${workflow.input.idx}].price}]}", null],
    ["${fetch.output.body.ids[${workflow.input.tags.length()}]}", 30],
    ["${${workflow.input.nope}}", null],
    ["${workflow.input.${workflow.input.nope}}", null],
    ["${workflow.input.${}}", null],
    ["x ${workflow.input.${workflow.input.key}} y", "x 2 y"],
  ])("%s", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("an expression with nested expressions reads only the root its text names", () => {
  const ctx = (): ExpressionContext & { lookups: string[] } =>
    contextWith({
      workflow: {
        ...workflow,
        input: { ...workflow.input, ref: "fetch", frag: "[?(@.price < $.fetch.output.status)].sku", field: "status" },
      },
    });

  it("resolves the path the nested values build", () => {
    expect(resolve("${fetch.output.${workflow.input.field}}", ctx())).toBe(200);
    expect(resolve("${workflow.input.items${workflow.input.frag}}", ctx())).toEqual([]);
    expect(resolve("${workflow.input.items[?(@.price < 10)].sku}", ctx())).toEqual(["x"]);
  });

  it("gives null when the root itself is computed, and loads nothing for it", () => {
    const c = ctx();
    expect(resolve("${${workflow.input.ref}.output.status}", c)).toBeNull();
    expect(resolve("${$['${workflow.input.ref}'].status}", c)).toBeNull();
    expect(c.lookups).toEqual([]);
  });

  it("does not let a nested value smuggle in a `$` path to another task", () => {
    const c = ctx();
    // Without the restriction this would read fetch.output.status (200) and match both items.
    expect(resolve("${workflow.input.items${workflow.input.frag}}", c)).toEqual([]);
    expect(c.lookups).toEqual([]);
  });
});

describe("a string mixing text and expressions interpolates", () => {
  it.each<[string, unknown]>([
    ["Order ${workflow.input.orderId} x${workflow.input.qty}", "Order o-1 x2"],
    [" ${workflow.input.qty}", " 2"],
    ["${workflow.input.qty}${workflow.input.qty}", "22"],
    ["${workflow.input.paid} ${workflow.input.price}", "true 9.5"],
    ["${workflow.input.none}!", "null!"],
    ["${workflow.input.missing}-", "null-"],
    ["tags=${workflow.input.tags}", 'tags=["a","b"]'],
    ["c=${workflow.input.customer}", 'c={"name":"Ann","home town":"Oslo"}'],
    ["skus=${workflow.input.items[*].sku}", 'skus=["x","y"]'],
    ["Name: ${workflow.input.customer.name};\nQty: ${workflow.input.qty};\r\n", "Name: Ann;\nQty: 2;\r\n"],
    ["id=${CPEWF_TASK_ID}", "id=null"],
  ])("%s", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it("prints data as it is, even when it contains an escape sequence", () => {
    expect(resolve("v=${workflow.input.money}")).toBe("v=$${not an escape in data}");
    expect(resolve("${workflow.input.money}")).toBe("$${not an escape in data}");
  });

  it("gives null rather than building a string past the limit", () => {
    const big = "x".repeat(1024 * 1024);
    const ctx = contextWith({ workflow: { ...workflow, input: { big } } });
    const template = "${workflow.input.big}".repeat(Math.ceil(MAX_INTERPOLATED_LENGTH / big.length) + 1);
    expect(resolveTemplate(template, ctx)).toBeNull();
    expect(resolveTemplate("${workflow.input.big}${workflow.input.big}", ctx)).toBe(big + big);
  });
});

describe("escapes and malformed templates", () => {
  it.each<[string, unknown]>([
    ["$${workflow.input.qty}", "${workflow.input.qty}"],
    ["$${workflow.input.qty} = ${workflow.input.qty}", "${workflow.input.qty} = 2"],
    // Conductor's own escape test (ParametersUtilsTest.testReplaceWithEscapedTags), on this context.
    [
      "${workflow.input.orderId} $${workflow.input.qty}${workflow.input.qty} ${workflow.input.qty}$${workflow.input.orderId}",
      "o-1 ${workflow.input.qty}2 2${workflow.input.orderId}",
    ],
    ["$${workflow.input.orderId}afterText", "${workflow.input.orderId}afterText"],
    ["beforeText $${workflow.input.orderId}", "beforeText ${workflow.input.orderId}"],
    ["no expressions $${at} all", "no expressions ${at} all"],
    ["$$${workflow.input.qty}", "$${workflow.input.qty}"],
    ["cost: $5", "cost: $5"],
    ["${}", ""],
    ["${   }", ""],
    ["a${}b", "ab"],
    // Unclosed `${` stays literal text.
    ["${workflow.input.qty", "${workflow.input.qty"],
    ["${workflow.input.qty ${workflow.input.orderId}", "${workflow.input.qty o-1"],
    ["${workflow.input.qty}}", "2}"],
    ["{${workflow.input.qty}", "{2"],
    ["return `${x`;", "return `${x`;"],
    // As in Conductor, a later `}` closes it: script text needs `$${` to keep a JS template literal.
    ["function() { return `${x`; }", "function() { return `null"],
    ["function() { return `$${x}`; }", "function() { return `${x}`; }"],
  ])("%j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("no access to the process environment", () => {
  it.each(["${HOME}", "${PATH}", "${NETFLIX_ENV}", "${NETFLIX_STACK}", "${CPEWF_TASK_ID}"])("%s is null", (template) => {
    expect(resolve(template)).toBeNull();
  });

  it("writes secrets and variables as placeholders: they are resolved only when a task is dispatched", () => {
    expect(resolve("${workflow.secrets.password}")).toBe("***");
    expect(resolve("Bearer ${workflow.secrets['password']}")).toBe("Bearer ***");
    expect(resolve("${workflow.env.HOME}/x")).toBe("${workflow.env.HOME}/x");
    // Not one plain reference, or computed from data: nothing to read.
    expect(resolve("${workflow.secrets}")).toBeNull();
    expect(resolve("${workflow.secrets.password.length}")).toBeNull();
    expect(resolve("${workflow.secrets.${workflow.input.which}}")).toBeNull();
  });

  it("reads them through the dispatcher's lookup when it gives one", () => {
    const dispatch = (r: { kind: string; name: string }) => `${r.kind}:${r.name}`;
    expect(resolveTemplate({ h: "Bearer ${workflow.secrets.T}", u: "${workflow.env.HOST}/${workflow.input.id}" }, contextWith({}), { dispatch })).toEqual({
      h: "Bearer secrets:T",
      u: "env:HOST/null",
    });
  });

  it("substitutes CPEWF_TASK_ID with the id of the task being scheduled, as Conductor does", () => {
    expect(resolve("${CPEWF_TASK_ID}", contextWith({ taskId: "t-new" }))).toBe("t-new");
    // Conductor matches the name exactly; with blanks it is an ordinary path (a task named CPEWF_TASK_ID).
    expect(resolve("${ CPEWF_TASK_ID }", contextWith({ taskId: "t-new" }))).toBeNull();
  });
});

describe("walking JSON values", () => {
  it("resolves every string in objects and arrays and leaves other values alone", () => {
    const template = {
      a: "${workflow.input.qty}",
      b: ["${fetch.output.status}", 1, null, true, { c: "x ${workflow.input.orderId}" }, []],
      n: 5,
      nested: { deeper: { list: [["${workflow.input.tags}"]] } },
      empty: {},
      text: "plain",
    };
    const before = JSON.stringify(template);
    expect(resolve(template)).toEqual({
      a: 2,
      b: [200, 1, null, true, { c: "x o-1" }, []],
      n: 5,
      nested: { deeper: { list: [[["a", "b"]]] } },
      empty: {},
      text: "plain",
    });
    expect(JSON.stringify(template)).toBe(before);
  });

  it("resolves scalars and top-level arrays", () => {
    expect(resolve("${workflow.input.qty}")).toBe(2);
    expect(resolve(["${workflow.input.qty}"])).toEqual([2]);
    expect(resolve(42)).toBe(42);
    expect(resolve(null)).toBeNull();
    expect(resolve(true)).toBe(true);
  });

  it("keeps a __proto__ key as data", () => {
    const template = JSON.parse('{"__proto__": {"polluted": "${workflow.input.qty}"}}') as unknown;
    const out = resolve(template) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__"]);
    expect(out["__proto__"]).toEqual({ polluted: 2 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("keeps key order", () => {
    expect(Object.keys(resolve({ z: 1, a: "${workflow.input.qty}", m: 2 }) as object)).toEqual(["z", "a", "m"]);
  });
});

describe("the context", () => {
  it("looks each task up once per call and never asks for `workflow`", () => {
    const ctx = contextWith();
    resolveTemplate({ a: "${fetch.output.status} ${fetch.taskId}", b: "${workflow.input.qty}", c: "${nope.output}", d: "${nope.status}" }, ctx);
    expect([...ctx.lookups].sort()).toEqual(["fetch", "nope"]);
  });

  it("defaults a missing workflow output to {} as Conductor does", () => {
    const { output: _output, ...rest } = workflow;
    expect(resolve("${workflow.output}", contextWith({ workflow: rest }))).toEqual({});
  });
});

describe("resolveTemplateIn", () => {
  const roots = { body: { order: { id: 7, items: [1, 2] } }, headers: { "x-event": "paid" }, query: {} };

  it("reads only the roots it is given, by Conductor's rules", () => {
    expect(resolveTemplateIn({ id: "${body.order.id}", event: "${headers['x-event']}", text: "order ${body.order.id}", all: "${body}" }, roots)).toEqual({
      id: 7,
      event: "paid",
      text: "order 7",
      all: roots.body,
    });
    expect(resolveTemplateIn("${workflow.input}", roots)).toBeNull();
    expect(resolveTemplateIn("${nothing.here}", roots)).toBeNull();
    expect(resolveTemplateIn("${CPEWF_TASK_ID}", roots)).toBeNull();
  });
});
