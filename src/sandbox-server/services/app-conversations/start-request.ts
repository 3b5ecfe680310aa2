import { validationError } from '../../../errors/index.js';
import type { StartConversationRequestBody } from '../../agent-client.js';
import type { Secrets } from '../../../contracts/agent-server/secrets.js';
import type { AppConversationSettings } from './context.js';
import type { RelayedLlm } from './relayed-llm.js';
import type { AppConversationStartRequest } from '../../models/app-conversation.js';

/** The request as stored on the task and shown back: everything but the secrets and the LLM key. */
export function storedRequest(request: AppConversationStartRequest): Record<string, unknown> {
  const { secrets: _secrets, llm_api_key: _llmApiKey, ...rest } = request;
  return rest;
}

/** The model a conversation runs with: the request's, else the server's default; 422 when neither. */
export function chooseLlmModel(request: AppConversationStartRequest, settings: AppConversationSettings): string {
  const model = request.llm_model ?? settings.llm.model;
  if (!model) {
    throw validationError('body', ['llm_model'], 'No LLM model: pass llm_model or start the server with LLM_MODEL set', 'missing');
  }
  return model;
}

/** POST /api/conversations on the sandbox's agent-server, for the conversation a task creates. */
export function agentConversationRequest(input: {
  conversationId: string;
  request: AppConversationStartRequest;
  secrets: Secrets;
  settings: AppConversationSettings;
  /** Where the agent calls its LLM (the relay) and with what (a relay token, never a key). */
  llm: RelayedLlm;
  workingDir: string;
}): StartConversationRequestBody {
  const { request, settings } = input;
  return {
    conversation_id: input.conversationId,
    agent: {
      kind: 'Agent',
      llm: {
        model: chooseLlmModel(request, settings),
        base_url: input.llm.base_url,
        api_key: input.llm.api_key,
      },
      // OpenHands' AgentContext carries it; the agent-server adds it to the end of the system message.
      ...(request.system_message_suffix ? { agent_context: { system_message_suffix: request.system_message_suffix } } : {}),
    },
    workspace: { working_dir: input.workingDir },
    ...(request.initial_message ? { initial_message: request.initial_message } : {}),
    tags: request.tags,
    ...(request.title ? { title: request.title } : {}),
    secrets: input.secrets,
  };
}
