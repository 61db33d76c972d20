import { Alert } from "@heroui/react";

/** A form's error that belongs to no one field, at the top of its dialog; nothing when there is none. */
export function FormAlert({ title, message }: { title: string; message: string | null | undefined }) {
  if (!message) return null;
  return (
    <Alert role="alert" status="danger">
      <Alert.Indicator />
      <Alert.Content>
        <Alert.Title>{title}</Alert.Title>
        <Alert.Description>{message}</Alert.Description>
      </Alert.Content>
    </Alert>
  );
}
