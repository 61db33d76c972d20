"use client";

import { Checkbox, CheckboxGroup, Description, Input, Label, ListBox, Select, TextArea } from "@heroui/react";
import type { ThemeProps } from "@rjsf/core";
import { withTheme } from "@rjsf/core";
import type {
  BaseInputTemplateProps,
  DescriptionFieldProps,
  FieldErrorProps,
  FieldHelpProps,
  FieldTemplateProps,
  ObjectFieldTemplateProps,
  RegistryWidgetsType,
  TemplatesType,
  TitleFieldProps,
  WidgetProps,
} from "@rjsf/utils";
import { ariaDescribedByIds, descriptionId, enumOptionsIndexForValue, enumOptionsValueForIndex, errorId, getInputProps, helpId } from "@rjsf/utils";
import type { ChangeEvent, Key } from "react";

/**
 * An rjsf v6 theme drawn with HeroUI's primitives, so a human task's form
 * looks like every other form of the console (light and dark come from the
 * same tokens). The field template owns the label, the required mark, help
 * text and the errors under the field; widgets draw only their input. Widgets
 * that are not a native labelable input (select, checkbox groups) are named by
 * the field's label through `aria-labelledby`, so `getByLabel("Amount")`
 * finds every kind of field.
 */

/** The id of a field's visible label, for widgets the `<label for>` cannot name. */
export function labelId(id: string): string {
  return `${id}__label`;
}

function invalid(rawErrors: readonly string[] | undefined): boolean {
  return (rawErrors?.length ?? 0) > 0;
}

function FieldTemplate(props: FieldTemplateProps) {
  const { id, label, children, errors, help, description, hidden, required, displayLabel, rawErrors, schema, uiSchema, fieldPathId } = props;
  if (hidden) return <div className="hidden">{children}</div>;
  // The root object draws its children only: the task's title is the page's heading.
  if (fieldPathId.path.length === 0 && schema.type === "object") return children;
  const isBoolean = schema.type === "boolean" && uiSchema?.["ui:widget"] === undefined;
  return (
    <div className="flex min-w-0 flex-col gap-1.5" data-field={fieldPathId.path.join(".")} data-invalid={invalid(rawErrors) || undefined}>
      {displayLabel && !isBoolean ? (
        <Label htmlFor={id} id={labelId(id)} isInvalid={invalid(rawErrors)} isRequired={required}>
          {label}
        </Label>
      ) : null}
      {children}
      {displayLabel && !isBoolean ? description : null}
      {help}
      {errors}
    </div>
  );
}

function ObjectFieldTemplate({ properties, title, description, fieldPathId }: ObjectFieldTemplateProps) {
  const root = fieldPathId.path.length === 0;
  return (
    <fieldset className={root ? "flex min-w-0 flex-col gap-4" : "flex min-w-0 flex-col gap-4 rounded-xl border border-separator p-3"} id={fieldPathId.$id}>
      {!root && title ? <legend className="px-1 text-sm font-medium text-foreground">{title}</legend> : null}
      {!root && description ? description : null}
      {properties.map((p) => p.content)}
    </fieldset>
  );
}

function FieldErrorTemplate({ errors = [], fieldPathId }: FieldErrorProps) {
  const messages = errors.filter((e) => typeof e === "string" ? e.length > 0 : Boolean(e));
  if (messages.length === 0) return null;
  return (
    <ul className="flex flex-col gap-0.5 text-xs text-danger" data-slot="field-error" id={errorId(fieldPathId)} role="alert">
      {messages.map((message, i) => (
        <li key={i}>{message}</li>
      ))}
    </ul>
  );
}

function FieldHelpTemplate({ help, fieldPathId }: FieldHelpProps) {
  if (!help) return null;
  return (
    <Description className="text-xs" id={helpId(fieldPathId)}>
      {help}
    </Description>
  );
}

function DescriptionFieldTemplate({ id, description }: DescriptionFieldProps) {
  if (!description) return null;
  return (
    <Description className="text-xs" id={id}>
      {description}
    </Description>
  );
}

function TitleFieldTemplate({ id, title, required }: TitleFieldProps) {
  return (
    <h3 className="text-sm font-semibold text-foreground" id={id}>
      {title}
      {required ? <span className="text-danger"> *</span> : null}
    </h3>
  );
}

/** What every text-like control takes from rjsf: ids, ARIA state, read-only and disabled, placeholder. */
function controlProps({ id, htmlName, readonly, disabled, autofocus, placeholder, rawErrors, required }: Pick<WidgetProps, "id" | "htmlName" | "readonly" | "disabled" | "autofocus" | "placeholder" | "rawErrors" | "required">) {
  return {
    "aria-describedby": ariaDescribedByIds(id),
    "aria-invalid": invalid(rawErrors) || undefined,
    "aria-required": required || undefined,
    autoFocus: autofocus,
    className: readonly ? "bg-default/60" : undefined,
    disabled,
    id,
    name: htmlName || id,
    placeholder,
    readOnly: readonly,
  };
}

/** Text, email, URL, number and date inputs: HeroUI's styled native input. */
function BaseInputTemplate(props: BaseInputTemplateProps) {
  const { id, onBlur, onFocus, onChange, onChangeOverride, options, schema } = props;
  const value: unknown = props.value;
  const inputProps = getInputProps(schema, typeof props.type === "string" ? props.type : undefined, options);
  const text = inputProps.type === "number" || inputProps.type === "integer" ? (typeof value === "number" || typeof value === "string" ? String(value) : "") : value == null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  const handleChange = (event: ChangeEvent<HTMLInputElement>) => onChange(event.target.value === "" ? options.emptyValue : event.target.value);
  return (
    <Input
      {...inputProps}
      {...controlProps(props)}
      value={text}
      onBlur={(e) => onBlur(id, e.target.value)}
      onChange={onChangeOverride ?? handleChange}
      onFocus={(e) => onFocus(id, e.target.value)}
    />
  );
}

function TextareaWidget(props: WidgetProps) {
  const { id, onBlur, onFocus, onChange, options } = props;
  const value: unknown = props.value;
  const rows = typeof options.rows === "number" ? options.rows : 4;
  return (
    <TextArea
      {...controlProps(props)}
      rows={rows}
      value={typeof value === "string" ? value : ""}
      onBlur={(e) => onBlur(id, e.target.value)}
      onChange={(e) => onChange(e.target.value === "" ? options.emptyValue : e.target.value)}
      onFocus={(e) => onFocus(id, e.target.value)}
    />
  );
}

const NONE = "__none__";

function SelectWidget(props: WidgetProps) {
  const { id, required, disabled, readonly, onChange, options, placeholder, rawErrors } = props;
  const value: unknown = props.value;
  // An array of choices: drawn as checkboxes, which work on a phone and show every choice at once.
  if (props.multiple === true) return <CheckboxesWidget {...props} />;
  const enumOptions = options.enumOptions ?? [];
  const index = enumOptionsIndexForValue(value, enumOptions, false);
  const selected = typeof index === "string" ? index : required ? null : NONE;
  return (
    <Select
      aria-describedby={ariaDescribedByIds(id)}
      aria-labelledby={labelId(id)}
      id={id}
      isDisabled={disabled || readonly}
      isInvalid={invalid(rawErrors)}
      placeholder={placeholder || "Choose…"}
      value={selected}
      onChange={(key: Key | null) => onChange(key === null || key === NONE ? options.emptyValue : enumOptionsValueForIndex(String(key), enumOptions, options.emptyValue))}
    >
      <Select.Trigger>
        <Select.Value />
        <Select.Indicator />
      </Select.Trigger>
      <Select.Popover>
        <ListBox>
          {required ? null : (
            <ListBox.Item id={NONE} textValue="None">
              <span className="text-muted">None</span>
              <ListBox.ItemIndicator />
            </ListBox.Item>
          )}
          {enumOptions.map((option, i) => (
            <ListBox.Item key={i} id={String(i)} textValue={option.label}>
              {option.label}
              <ListBox.ItemIndicator />
            </ListBox.Item>
          ))}
        </ListBox>
      </Select.Popover>
    </Select>
  );
}

function CheckboxesWidget({ id, value, disabled, readonly, onChange, options, rawErrors }: WidgetProps) {
  const enumOptions = options.enumOptions ?? [];
  const selected = Array.isArray(value) ? value : [];
  const indexes = enumOptionsIndexForValue(selected, enumOptions, true);
  return (
    <CheckboxGroup
      aria-describedby={ariaDescribedByIds(id)}
      aria-labelledby={labelId(id)}
      className="flex flex-col gap-1.5"
      id={id}
      isDisabled={disabled}
      isInvalid={invalid(rawErrors)}
      isReadOnly={readonly}
      value={Array.isArray(indexes) ? indexes : []}
      // Back to values in the options' order, whatever order they were ticked in.
      onChange={(next) => onChange(enumOptions.filter((_, i) => next.includes(String(i))).map((o): unknown => o.value))}
    >
      {enumOptions.map((option, i) => (
        <Checkbox key={i} value={String(i)}>
          <Checkbox.Content>
            <Checkbox.Control>
              <Checkbox.Indicator />
            </Checkbox.Control>
            {option.label}
          </Checkbox.Content>
        </Checkbox>
      ))}
    </CheckboxGroup>
  );
}

function CheckboxWidget({ id, value, disabled, readonly, onChange, label, required, rawErrors, schema, fieldPathId, hideLabel }: WidgetProps & { fieldPathId?: { $id: string } }) {
  const description = typeof schema.description === "string" ? schema.description : undefined;
  return (
    <Checkbox
      aria-describedby={ariaDescribedByIds(id)}
      id={id}
      isDisabled={disabled}
      isInvalid={invalid(rawErrors)}
      isReadOnly={readonly}
      isSelected={value === true}
      onChange={(next) => onChange(next)}
    >
      <Checkbox.Content>
        <Checkbox.Control>
          <Checkbox.Indicator />
        </Checkbox.Control>
        {hideLabel ? null : (
          <span>
            {label}
            {required ? <span className="text-danger"> *</span> : null}
          </span>
        )}
      </Checkbox.Content>
      {description ? (
        <Description className="text-xs" id={descriptionId(fieldPathId?.$id ?? id)}>
          {description}
        </Description>
      ) : null}
    </Checkbox>
  );
}

function TextWidget(props: WidgetProps) {
  // No type of its own: getInputProps derives it from the schema (number for numbers, with min, max and step).
  return <BaseInputTemplate {...props} type={typeof props.type === "string" ? props.type : undefined} />;
}

function EmailWidget(props: WidgetProps) {
  return <BaseInputTemplate {...props} type="email" />;
}

function URLWidget(props: WidgetProps) {
  return <BaseInputTemplate {...props} type="url" />;
}

function DateWidget(props: WidgetProps) {
  return <BaseInputTemplate {...props} type="date" />;
}

function UpDownWidget(props: WidgetProps) {
  return <BaseInputTemplate {...props} type="number" />;
}

const widgets: RegistryWidgetsType = {
  TextWidget,
  TextareaWidget,
  SelectWidget,
  CheckboxesWidget,
  CheckboxWidget,
  EmailWidget,
  URLWidget,
  DateWidget,
  UpDownWidget,
};

const templates: Partial<TemplatesType> = {
  BaseInputTemplate,
  FieldTemplate,
  ObjectFieldTemplate,
  FieldErrorTemplate,
  FieldHelpTemplate,
  DescriptionFieldTemplate,
  TitleFieldTemplate,
  // The errors are shown under their fields; a list at the top would say everything twice.
  ErrorListTemplate: () => null,
};

export const heroUiTheme: ThemeProps = { widgets, templates };

/** rjsf's Form with the HeroUI theme. */
export const ThemedForm = withTheme(heroUiTheme);
