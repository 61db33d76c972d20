import { describe, expect, it } from "vitest";
import { InvalidSearchTermError, parseExecutionSearch } from "./execution-search";

describe("parseExecutionSearch", () => {
  it("turns each term into containment on input or output, a bare number or boolean also as its string", () => {
    expect(parseExecutionSearch('  input.customer.id:42 output.ok:true input.name:"Ada Lovelace" input.tag:blue ')).toEqual([
      { column: "input", anyOf: [{ customer: { id: 42 } }, { customer: { id: "42" } }] },
      { column: "output", anyOf: [{ ok: true }, { ok: "true" }] },
      { column: "input", anyOf: [{ name: "Ada Lovelace" }] },
      { column: "input", anyOf: [{ tag: "blue" }] },
    ]);
    expect(parseExecutionSearch("")).toEqual([]);
    expect(parseExecutionSearch("input.url:http://x.example/a")).toEqual([{ column: "input", anyOf: [{ url: "http://x.example/a" }] }]);
  });

  it.each(["customer.id:42", "input.id", "input.:1", "input..a:1", "input.a:", "input.a:[1]", 'input.a:"open', "variables.a:1"])("refuses %s, naming it", (term) => {
    expect(() => parseExecutionSearch(`input.ok:1 ${term}`)).toThrow(InvalidSearchTermError);
    try {
      parseExecutionSearch(`input.ok:1 ${term}`);
    } catch (error) {
      expect((error as Error).message).toContain(term.split(" ")[0]!.slice(0, 6));
    }
  });
});
