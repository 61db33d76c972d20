import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { fieldsToForm } from "../editor/inspector/human-form-model";
import { HumanTaskForm } from "./human-task-form";

const { schema, uiSchema } = fieldsToForm([
  { key: "amount", type: "number", label: "Amount", required: true, maximum: 100, help: "In euros" },
  { key: "note", type: "textarea", label: "Note", required: false },
  { key: "size", type: "select", label: "Size", required: false, options: ["S", "M"] },
  { key: "tags", type: "multiselect", label: "Tags", required: false, options: ["a", "b"] },
  { key: "ok", type: "checkbox", label: "Looks right", required: false },
  { key: "day", type: "date", label: "Day", required: false },
  { key: "order", type: "text", label: "Order", required: false, readOnly: true },
]);

/** The server render: what the theme draws before any script runs. */
function render(props: Partial<Parameters<typeof HumanTaskForm>[0]> = {}): string {
  return renderToStaticMarkup(<HumanTaskForm formData={{ order: "A-1", amount: 5 }} outcomes={["Approve", "Reject"]} schema={schema} uiSchema={uiSchema} {...props} />);
}

describe("HumanTaskForm", () => {
  it("draws each field with its label bound to its input, the required mark and help text", () => {
    const html = render();
    expect(html).toMatch(/<label[^>]*for="root_amount"[^>]*>Amount/);
    expect(html).toMatch(/<input[^>]*id="root_amount"[^>]*type="number"|<input[^>]*type="number"[^>]*id="root_amount"/);
    expect(html).toContain("In euros");
    expect(html).toMatch(/<textarea[^>]*id="root_note"/);
    expect(html).toMatch(/<input[^>]*type="date"/);
    expect(html).toContain("Looks right");
    expect(html).not.toContain("btn btn-info");
  });

  it("shows read-only context as read-only, pre-filled", () => {
    expect(render()).toMatch(/<input[^>]*(readonly=""[^>]*value="A-1"|value="A-1"[^>]*readonly="")/i);
  });

  it("renders the outcomes as buttons, or one Submit without outcomes, or none when asked", () => {
    const html = render();
    expect(html).toContain(">Approve<");
    expect(html).toContain(">Reject<");
    expect(render({ outcomes: [] })).toContain(">Submit<");
    expect(render({ hideButtons: true })).not.toContain(">Approve<");
  });

  it("draws the server's field errors under their field", () => {
    const html = render({ fieldErrors: [{ path: "/amount", message: "must be <= 100" }] });
    expect(html).toMatch(/data-field="amount" data-invalid="true"/);
    expect(html).toContain("must be &lt;= 100");
  });
});
