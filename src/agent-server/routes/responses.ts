/** Response descriptions shared by the routes' OpenAPI definitions. */
import { z } from 'zod';

export const SuccessSchema = z.object({ success: z.boolean() });

export const DetailSchema = z.object({ detail: z.string() });

export const HTTPValidationErrorSchema = z.object({
  detail: z.array(
    z.object({
      loc: z.array(z.union([z.string(), z.int()])),
      msg: z.string(),
      type: z.string(),
    }),
  ),
});

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export const validationErrorResponse = {
  422: jsonContent(HTTPValidationErrorSchema, 'Validation Error'),
} as const;

export const conversationNotFoundResponse = {
  404: jsonContent(DetailSchema, 'Conversation not found'),
} as const;

/** Running the agent first creates the conversation's workspace directory, which may be unusable. */
export const workspaceUnusableResponse = {
  409: jsonContent(DetailSchema, "The conversation's workspace cannot be created or used (a file is in the way, the path is too long, no permission)"),
} as const;
