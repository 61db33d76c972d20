import { describe, expect, it } from "vitest";
import { formErrors, routeCredentialMessage } from "./form-errors";

describe("formErrors", () => {
  it("puts zod's messages next to their fields", () => {
    const error = { message: "[...]", data: { zodError: { fieldErrors: { email: ["Enter your email address."], password: [] } } } };
    expect(formErrors(error)).toEqual({ fields: { email: ["Enter your email address."] }, form: null });
  });

  it("routes a service's refusal to the field it is about", () => {
    const error = { message: "The password must be at least 12 characters long.", data: { zodError: null } };
    expect(formErrors(error, routeCredentialMessage)).toEqual({
      fields: { password: ["The password must be at least 12 characters long."] },
      form: null,
    });
  });

  it("keeps a refusal about no one field for the form", () => {
    expect(formErrors({ message: "This installation already has an owner: sign in instead." }, routeCredentialMessage)).toEqual({
      fields: {},
      form: "This installation already has an owner: sign in instead.",
    });
    expect(formErrors({ message: "The password must be long." })).toEqual({ fields: {}, form: "The password must be long." });
  });

  it("is empty without an error", () => {
    expect(formErrors(null)).toEqual({ fields: {}, form: null });
  });
});

describe("routeCredentialMessage", () => {
  it("prefers the password when a message names both", () => {
    expect(routeCredentialMessage("The password must not contain the email address.")).toBe("password");
    expect(routeCredentialMessage("A user with the email a@b.c already exists.")).toBe("email");
    expect(routeCredentialMessage("Only an owner can add users.")).toBeNull();
  });
});
