/**
 * The request bodies' one definition (src/wire), checked where a body arrives: on its
 * route, whose validator compiler hands Fastify the shared compiled function, and on a
 * batch line (parseBody). Each bad body must be refused on both paths with exactly the
 * message and param below (the spec's wording, and what clients have always seen), before
 * any handler runs. Bodies the schema accepts reach the domain, which turns them into its
 * requests; the one fault a schema cannot say (text parts that are all empty) is the
 * domain's.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/http/plugins/error-handler.js';
import { ChatCompletionBody, type ChatCompletionRequestBody } from '../../src/wire/chat-completions/body.js';
import { EmbeddingsBody } from '../../src/wire/embeddings/body.js';
import { ModerationsBody } from '../../src/wire/moderations/body.js';
import { ResponsesBody, type ResponsesRequestBody } from '../../src/wire/responses/body.js';
import { AJV_OPTIONS, parseBody, validatorOf, wireValidatorCompiler } from '../../src/wire/validate.js';
import { chatRequestOf } from '../../src/wire/chat-completions/mapper.js';
import { responsesRequestOf } from '../../src/wire/responses/mapper.js';
import { AppError } from '../../src/domain/shared/errors.js';

/** A body, and the message and param it is refused with. */
type Refusal = [body: unknown, message: string, param: string | null];

interface Front {
  schema: TSchema;
  /** What the domain makes of a body the schema accepted. */
  domain: (body: never) => unknown;
  refused: Refusal[];
  accepted: unknown[];
  /** Faults the schema leaves to the domain (they need more than a schema can say). */
  leftToDomain: Refusal[];
}

const hello = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const eleven = 'abcdefghijk'.split('');
const many = (count: number) => Array.from({ length: count }, () => 'a');
const BAD_MODERATION_INPUT = 'input must be a non-empty string, an array of non-empty strings, or an array of text parts';

const fronts: Record<string, Front> = {
  'chat completions': {
    schema: ChatCompletionBody,
    domain: (body: ChatCompletionRequestBody) => chatRequestOf(body),
    refused: [
      [[], "The request body must be a JSON object, got an array", null],
      ["text", "The request body must be a JSON object, got a string", null],
      [5, "The request body must be a JSON object, got a number", null],
      [null, "The request body must be a JSON object, got null", null],
      [{ messages: [{ role: "user", content: "hi" }] }, "model is required", "model"],
      [{ model: null, messages: [{ role: "user", content: "hi" }] }, "model is required", "model"],
      [{ model: "", messages: [{ role: "user", content: "hi" }] }, "model must be a non-empty string", "model"],
      [{ model: 7, messages: [{ role: "user", content: "hi" }] }, "model must be a non-empty string", "model"],
      [{ model: "m" }, "messages is required", "messages"],
      [{ model: "m", messages: null }, "messages is required", "messages"],
      [{ model: "m", messages: {} }, "messages must be a non-empty array", "messages"],
      [{ model: "m", messages: [] }, "messages must be a non-empty array", "messages"],
      [{ model: "m", messages: ["hi"] }, "messages[0] must be an object with role and content, got a string", "messages[0]"],
      [{ model: "m", messages: [null] }, "messages[0] must be an object with role and content, got null", "messages[0]"],
      [{ model: "m", messages: [[]] }, "messages[0] must be an object with role and content, got an array", "messages[0]"],
      [{ model: "m", messages: [{ content: "x" }] }, "messages[0].role is required", "messages[0].role"],
      [{ model: "m", messages: [{ role: null, content: "x" }] }, "messages[0].role is required", "messages[0].role"],
      [{ model: "m", messages: [{ role: "robot", content: "x" }] }, "messages[0].role must be one of system, user, assistant, tool, developer", "messages[0].role"],
      [{ model: "m", messages: [{ role: 5, content: "x" }] }, "messages[0].role must be one of system, user, assistant, tool, developer", "messages[0].role"],
      [{ model: "m", messages: [{ role: "user", content: "x" }, { role: "user" }] }, "messages[1].content is required", "messages[1].content"],
      [{ model: "m", messages: [{ role: "user", content: null }] }, "messages[0].content is required", "messages[0].content"],
      [{ model: "m", messages: [{ role: "user", content: "" }] }, "messages[0].content must be a non-empty string", "messages[0].content"],
      [{ model: "m", messages: [{ role: "user", content: 5 }] }, "messages[0].content must be a non-empty string or an array of text parts", "messages[0].content"],
      [{ model: "m", messages: [{ role: "user", content: [] }] }, "messages[0].content must be a non-empty string or an array of text parts", "messages[0].content"],
      [{ model: "m", messages: [{ role: "user", content: [5] }] }, "messages[0].content[0] must be an object", "messages[0].content[0]"],
      [{ model: "m", messages: [{ role: "user", content: [null] }] }, "messages[0].content[0] must be an object", "messages[0].content[0]"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "video", video: {} }] }] }, "messages[0].content[1].type must be one of text, image_url, input_audio, file", "messages[0].content[1].type"],
      [{ model: "m", messages: [{ role: "user", content: [{ text: "a" }] }] }, "messages[0].content[0].type must be one of text, image_url, input_audio, file", "messages[0].content[0].type"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "image_url" }] }] }, "messages[0].content[0].image_url must be an object", "messages[0].content[0].image_url"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: "https://x" }] }] }, "messages[0].content[0].image_url must be an object", "messages[0].content[0].image_url"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: 5 }] }] }, "messages[0].content[0].input_audio must be an object", "messages[0].content[0].input_audio"],
      [{ model: "m", messages: [{ role: "assistant", content: null }] }, "messages[0].content is required", "messages[0].content"],
      [{ model: "m", messages: [{ role: "assistant", content: null, tool_calls: [] }] }, "messages[0].content is required", "messages[0].content"],
      [{ model: "m", messages: [{ role: "user", content: null, tool_calls: [{ id: "c" }] }] }, "messages[0].content is required", "messages[0].content"],
      [{ model: "m", messages: [{ role: "assistant", content: "x", tool_calls: "call" }] }, "messages[0].tool_calls must be an array of tool calls", "messages[0].tool_calls"],
      [{ model: "m", messages: [{ role: "assistant", content: "x", tool_calls: [5] }] }, "messages[0].tool_calls[0] must be an object", "messages[0].tool_calls[0]"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "text" }] }] }, "messages[0].content[0].text must be a string", "messages[0].content[0].text"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] }, "messages[0].content[0].text must be a string", "messages[0].content[0].text"],
      [{ model: "m", messages: [{ role: "user", content: "x", name: 5 }] }, "messages[0].name must be a string, got a number", "messages[0].name"],
      [{ model: "m", messages: [{ role: "tool", content: "x", tool_call_id: [] }] }, "messages[0].tool_call_id must be a string, got an array", "messages[0].tool_call_id"],
      [{ ...hello, n: 0 }, "n must be an integer of at least 1", "n"],
      [{ ...hello, n: 129 }, "n must be an integer between 1 and 128", "n"],
      [{ ...hello, n: 1.5 }, "n must be an integer of at least 1", "n"],
      [{ ...hello, n: "1" }, "n must be an integer of at least 1", "n"],
      [{ ...hello, tools: "search" }, "tools must be an array of objects, got a string", "tools"],
      [{ ...hello, tools: [5] }, "tools[0] must be an object", "tools[0]"],
      [{ ...hello, tool_choice: 5 }, "tool_choice must be a string or an object, got a number", "tool_choice"],
      [{ ...hello, parallel_tool_calls: "yes" }, "parallel_tool_calls must be a boolean, got a string", "parallel_tool_calls"],
      [{ ...hello, logprobs: 1 }, "logprobs must be a boolean, got a number", "logprobs"],
      [{ ...hello, top_logprobs: 21 }, "top_logprobs must be an integer between 0 and 20", "top_logprobs"],
      [{ ...hello, logit_bias: [] }, "logit_bias must be an object, got an array", "logit_bias"],
      [{ ...hello, user: 5 }, "user must be a string, got a number", "user"],
      [{ ...hello, stream: "yes" }, "stream must be a boolean, got a string", "stream"],
      [{ ...hello, stream: 1 }, "stream must be a boolean, got a number", "stream"],
      [{ ...hello, stream_options: "x" }, "stream_options must be an object, got a string", "stream_options"],
      [{ ...hello, stream_options: { include_usage: "y" } }, "stream_options.include_usage must be a boolean, got a string", "stream_options.include_usage"],
      [{ ...hello, metadata: "x" }, "metadata must be an object, got a string", "metadata"],
      [{ ...hello, metadata: [] }, "metadata must be an object, got an array", "metadata"],
      [{ ...hello, temperature: 3 }, "temperature must be a number between 0 and 2", "temperature"],
      [{ ...hello, temperature: -0.5 }, "temperature must be a number between 0 and 2", "temperature"],
      [{ ...hello, temperature: "1" }, "temperature must be a number between 0 and 2", "temperature"],
      [{ ...hello, top_p: 1.5 }, "top_p must be a number between 0 and 1", "top_p"],
      [{ ...hello, presence_penalty: 3 }, "presence_penalty must be a number between -2 and 2", "presence_penalty"],
      [{ ...hello, frequency_penalty: -3 }, "frequency_penalty must be a number between -2 and 2", "frequency_penalty"],
      [{ ...hello, max_tokens: 0 }, "max_tokens must be an integer of at least 1", "max_tokens"],
      [{ ...hello, max_tokens: 1.5 }, "max_tokens must be an integer of at least 1", "max_tokens"],
      [{ ...hello, max_tokens: "5" }, "max_tokens must be an integer of at least 1", "max_tokens"],
      [{ ...hello, max_tokens: 2 ** 60 }, "max_tokens must be an integer of at least 1", "max_tokens"],
      [{ ...hello, max_completion_tokens: 0 }, "max_completion_tokens must be an integer of at least 1", "max_completion_tokens"],
      [{ ...hello, seed: 1.5 }, "seed must be an integer of at least -9007199254740991", "seed"],
      [{ ...hello, seed: -(2 ** 60) }, "seed must be an integer of at least -9007199254740991", "seed"],
      [{ ...hello, reasoning_effort: 5 }, "reasoning_effort must be a string, got a number", "reasoning_effort"],
      [{ ...hello, response_format: "json" }, "response_format must be an object, got a string", "response_format"],
      [{ ...hello, stop: 5 }, "stop must be a string or an array of at most 4 strings", "stop"],
      [{ ...hello, stop: ["a", 1] }, "stop must be a string or an array of at most 4 strings", "stop"],
      [{ ...hello, stop: ["a", "b", "c", "d", "e"] }, "stop must be a string or an array of at most 4 strings", "stop"],
      [{ ...hello, categories: [] }, "categories must be a non-empty array of strings", "categories"],
      [{ ...hello, categories: "a, b" }, "categories must be a non-empty array of strings", "categories"],
      [{ ...hello, categories: ["a", " "] }, "categories[1] must be a non-empty string", "categories[1]"],
      [{ ...hello, categories: [1] }, "categories[0] must be a non-empty string", "categories[0]"],
      [{ ...hello, categories: eleven }, "At most 10 candidate labels are allowed, got 11", "categories"],
    ],
    accepted: [
      hello,
      { ...hello, n: 1, tools: [], stop: [], categories: ['a', 'b'], stream: false, stream_options: { include_usage: true }, seed: -3 },
      { ...hello, n: null, tools: null, stream: null, stream_options: null, metadata: null, temperature: null, top_p: null, max_tokens: null, stop: null, categories: null },
      { ...hello, user: 'u', logit_bias: {}, logprobs: false, metadata: { multi_label: true }, response_format: { type: 'text' } },
      { ...hello, n: 3, logprobs: true, top_logprobs: 5, logit_bias: { '50256': -100 }, prediction: { type: 'content', content: 'x' }, service_tier: 'auto' },
      {
        ...hello,
        tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'weather' } },
        parallel_tool_calls: false,
      },
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
          { role: 'assistant', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        ],
      },
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
              { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
              { type: 'file', file: { file_id: 'file-1' } },
            ],
          },
        ],
      },
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'input_text', text: '' }] }] },
      { model: 'm', messages: [{ role: 'developer', content: 's', name: null }, { role: 'tool', content: 'r', tool_call_id: 'c' }] },
    ],
    leftToDomain: [
      [{ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "" }] }] }, "messages[0].content must not be empty", "messages[0].content"],
    ],
  },
  responses: {
    schema: ResponsesBody,
    domain: (body: ResponsesRequestBody) => responsesRequestOf(body),
    refused: [
      [[], "The request body must be a JSON object, got an array", null],
      [{ input: "x" }, "model is required", "model"],
      [{ model: 5, input: "x" }, "model must be a non-empty string", "model"],
      [{ model: "m" }, "input is required", "input"],
      [{ model: "m", input: null }, "input is required", "input"],
      [{ model: "m", input: "" }, "input must be a non-empty string or a list of messages", "input"],
      [{ model: "m", input: [] }, "input must be a non-empty string or a list of messages", "input"],
      [{ model: "m", input: 5 }, "input must be a non-empty string or a list of messages", "input"],
      [{ model: "m", input: [5] }, "input[0] must be an object with role and content, got a number", "input[0]"],
      [{ model: "m", input: [{ type: "function_call_output", output: "x" }] }, "input[0].call_id must be a string", "input[0].call_id"],
      [{ model: "m", input: [{ type: "function_call_output", call_id: "c" }] }, "input[0].output is required", "input[0].output"],
      [{ model: "m", input: [{ type: "function_call", call_id: "c", name: "f", arguments: {} }] }, "input[0].arguments must be a string (JSON text)", "input[0].arguments"],
      [{ model: "m", input: [{ type: "item_reference", id: "x" }] }, "input[0].type must be one of message, function_call, function_call_output, reasoning", "input[0].type"],
      [{ model: "m", input: [{ type: null, role: "user", content: "x" }] }, "input[0].type must be one of message, function_call, function_call_output, reasoning", "input[0].type"],
      [{ model: "m", input: [{ role: "user", content: 5 }] }, "input[0].content must be a non-empty string or an array of content parts", "input[0].content"],
      [{ model: "m", input: [{ role: "user", content: [{ type: "image_url" }] }] }, "input[0].content[0].type must be one of input_text, input_image, input_file, input_audio, output_text, refusal", "input[0].content[0].type"],
      [{ model: "m", input: [{ role: "user", content: [{ type: "input_image" }] }] }, "input[0].content[0].image_url must be a string (a URL or a data: URL) when file_id is not sent", "input[0].content[0].image_url"],
      [{ model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: "u", detail: "max" }] }] }, "input[0].content[0].detail must be auto, low or high", "input[0].content[0].detail"],
      [{ model: "m", input: [{ role: "user", content: [{ type: "input_file", filename: "a.pdf" }] }] }, "input[0].content[0].file_data must be a string (a data: URL or base64) when neither file_id nor file_url is sent", "input[0].content[0].file_data"],
      [{ model: "m", input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x" } }] }] }, "input[0].content[0].input_audio.format must be a string", "input[0].content[0].input_audio.format"],
      [{ model: "m", input: [{ role: "user" }] }, "input[0].content is required", "input[0].content"],
      [{ model: "m", input: "x", stream: "yes" }, "stream must be a boolean, got a string", "stream"],
      [{ model: "m", input: "x", background: "yes" }, "background must be a boolean, got a string", "background"],
      [{ model: "m", input: "x", previous_response_id: 5 }, "previous_response_id must be a string, got a number", "previous_response_id"],
      [{ model: "m", input: "x", tools: [{}] }, "tools[0].type is required", "tools[0].type"],
      [{ model: "m", input: "x", tools: [{ type: "custom" }] }, "tools[0].type \"custom\" is not supported; only function, namespace and hosted tools are", "tools[0].type"],
      [{ model: "m", input: "x", tools: [{ type: "namespace", name: "crm", tools: [{ type: "custom", name: "g" }] }] }, "tools[0].tools[0].type \"custom\" is not supported; only function tools are", "tools[0].tools[0].type"],
      [{ model: "m", input: "x", tools: [{ type: "namespace", name: "crm" }] }, "tools[0].tools is required", "tools[0].tools"],
      [{ model: "m", input: [{ type: "reasoning", encrypted_content: 5 }] }, "input[0].encrypted_content must be a string, got a number", "input[0].encrypted_content"],
      [{ model: "m", input: [{ type: "reasoning", content: "thoughts" }] }, "input[0].content must be an array of reasoning_text parts, got a string", "input[0].content"],
      [{ model: "m", input: [{ type: "reasoning", content: [7] }] }, "input[0].content[0] must be an object", "input[0].content[0]"],
      [{ model: "m", input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}", namespace: 3 }] }, "input[0].namespace must be a string, got a number", "input[0].namespace"],
      [{ model: "m", input: "x", tools: [{ type: "function", name: "a b" }] }, "tools[0].name must be 1 to 64 letters, digits, underscores or dashes", "tools[0].name"],
      [{ model: "m", input: "x", tool_choice: "maybe" }, "tool_choice must be none, auto, required or {\"type\": \"function\", \"name\": ...}", "tool_choice"],
      [{ model: "m", input: "x", tool_choice: { type: "web_search" } }, "tool_choice.type must be \"function\"; only function tools are supported", "tool_choice.type"],
      [{ model: "m", input: "x", max_tool_calls: 0 }, "max_tool_calls must be an integer of at least 1", "max_tool_calls"],
      [{ model: "m", input: "x", top_logprobs: 21 }, "top_logprobs must be an integer between 0 and 20", "top_logprobs"],
      [{ model: "m", input: "x", text: "x" }, "text must be an object, got a string", "text"],
      [{ model: "m", input: "x", text: { format: "x" } }, "text.format must be an object, got a string", "text.format"],
      [{ model: "m", input: "x", text: { format: { type: 5 } } }, "text.format.type must be a string, got a number", "text.format.type"],
      [{ model: "m", input: "x", text: { format: { type: "xml" } } }, "text.format.type \"xml\" is not supported; use text, json_object or json_schema", "text.format.type"],
      [{ model: "m", input: "x", text: { format: { type: "json_schema", schema: {} } } }, "text.format.name is required for json_schema", "text.format.name"],
      [{ model: "m", input: "x", text: { format: { type: "json_schema", name: "n" } } }, "text.format.schema is required for json_schema", "text.format.schema"],
      [{ model: "m", input: "x", instructions: ["x"] }, "instructions must be a string, got an array", "instructions"],
      [{ model: "m", input: "x", max_output_tokens: 0 }, "max_output_tokens must be an integer of at least 1", "max_output_tokens"],
      [{ model: "m", input: "x", truncation: "middle" }, "truncation must be \"auto\" or \"disabled\"", "truncation"],
      [{ model: "m", input: "x", truncation: 5 }, "truncation must be a string, got a number", "truncation"],
      [{ model: "m", input: "x", reasoning: "x" }, "reasoning must be an object, got a string", "reasoning"],
      [{ model: "m", input: "x", reasoning: { effort: 5 } }, "reasoning.effort must be a string, got a number", "reasoning.effort"],
      [{ model: "m", input: "x", temperature: 3 }, "temperature must be a number between 0 and 2", "temperature"],
      [{ model: "m", input: "x", top_p: -1 }, "top_p must be a number between 0 and 1", "top_p"],
      [{ model: "m", input: "x", store: "x" }, "store must be a boolean, got a string", "store"],
      [{ model: "m", input: "x", parallel_tool_calls: 1 }, "parallel_tool_calls must be a boolean, got a number", "parallel_tool_calls"],
      [{ model: "m", input: "x", user: 5 }, "user must be a string, got a number", "user"],
      [{ model: "m", input: "x", metadata: [] }, "metadata must be an object, got an array", "metadata"],
      [{ model: "m", input: "x", categories: eleven }, "At most 10 candidate labels are allowed, got 11", "categories"],
      [{ model: "m", input: "x", max_tokens: 0 }, "max_tokens must be an integer of at least 1", "max_tokens"],
    ],
    accepted: [
      { model: 'm', input: 'x' },
      { model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x' }] }], instructions: 'be brief' },
      { model: 'm', input: 'x', stream: false, previous_response_id: null, tools: [], text: { format: { type: 'text' } }, truncation: 'disabled' },
      { model: 'm', input: 'x', max_output_tokens: 5, max_tokens: 'read only when max_output_tokens is absent', reasoning: { effort: 'low' } },
      { model: 'm', input: 'x', max_output_tokens: null, max_tokens: 7 },
      {
        model: 'm',
        stream: true,
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'x' }, { type: 'input_image', image_url: 'data:image/png;base64,AA==', detail: 'low' }, { type: 'input_image', file_id: 'file-1' }] },
          { role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,AA==' }, { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }] },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'f' },
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
        max_tool_calls: 2,
        top_logprobs: 3,
      },
    ],
    leftToDomain: [
      [{ model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "" }] }] }, "input[0].content must not be empty", "input[0].content"],
    ],
  },
  embeddings: {
    schema: EmbeddingsBody,
    domain: () => undefined,
    refused: [
      ["x", "The request body must be a JSON object, got a string", null],
      [{ input: "a" }, "model is required", "model"],
      [{ model: null, input: "a" }, "model is required", "model"],
      [{ model: "m" }, "input is required", "input"],
      [{ model: "m", input: null }, "input is required", "input"],
      [{ model: "m", input: "" }, "input must be a non-empty string or an array of non-empty strings", "input"],
      [{ model: "m", input: [] }, "input must be a non-empty string or an array of non-empty strings", "input"],
      [{ model: "m", input: 5 }, "input must be a non-empty string or an array of non-empty strings", "input"],
      [{ model: "m", input: ["a", ""] }, "input[1] must be a non-empty string", "input[1]"],
      [{ model: "m", input: [1, 2, 3] }, "input[0] must be a non-empty string", "input[0]"],
      [{ model: "m", input: many(2049) }, "input must have at most 2048 elements", "input"],
      [{ model: "m", input: "a", encoding_format: "int8" }, "encoding_format must be \"float\" or \"base64\"", "encoding_format"],
      [{ model: "m", input: "a", encoding_format: 5 }, "encoding_format must be a string, got a number", "encoding_format"],
      [{ model: "m", input: "a", dimensions: 0 }, "dimensions must be an integer of at least 1", "dimensions"],
      [{ model: "m", input: "a", dimensions: 1.5 }, "dimensions must be an integer of at least 1", "dimensions"],
    ],
    accepted: [
      { model: 'm', input: 'a' },
      { model: 'm', input: ['a', 'b'], encoding_format: 'base64', dimensions: 384, user: 'u' },
      { model: 'm', input: 'a', encoding_format: null, dimensions: null },
    ],
    leftToDomain: [],
  },
  moderations: {
    schema: ModerationsBody,
    domain: () => undefined,
    refused: [
      ['x', 'The request body must be a JSON object, got a string', null],
      [{ model: '', input: 'a' }, 'model must be a non-empty string', 'model'],
      [{ model: 5, input: 'a' }, 'model must be a string, got a number', 'model'],
      [{}, 'input is required', 'input'],
      [{ input: null }, 'input is required', 'input'],
      [{ input: '' }, BAD_MODERATION_INPUT, 'input'],
      [{ input: [] }, BAD_MODERATION_INPUT, 'input'],
      [{ input: 5 }, BAD_MODERATION_INPUT, 'input'],
      [{ input: ['a', ''] }, 'input[1] must be a non-empty string', 'input[1]'],
      [{ input: ['a', 5] }, 'input[1] must be a non-empty string', 'input[1]'],
      [{ input: [5] }, 'input[0] must be a text part {type: "text", text}, got a number', 'input[0]'],
      [{ input: [{ type: 'text', text: 'a' }, 'b'] }, 'input[1] must be a text part {type: "text", text}, got a string', 'input[1]'],
      [{ input: [{ type: 'image_url' }] }, 'input[0].type must be "text"; only text is supported', 'input[0].type'],
      [{ input: [{ text: 'a' }] }, 'input[0].type must be "text"; only text is supported', 'input[0].type'],
      [{ input: [{ type: 'text' }] }, 'input[0].text must be a non-empty string', 'input[0].text'],
      [{ input: [{ type: 'text', text: '' }] }, 'input[0].text must be a non-empty string', 'input[0].text'],
      [{ input: 'a', metadata: [] }, 'metadata must be an object, got an array', 'metadata'],
    ],
    accepted: [
      { input: 'a' },
      { model: 'omni-moderation-latest', input: ['a', 'b'] },
      { input: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], metadata: {} },
      { model: null, input: 'a', metadata: null },
    ],
    leftToDomain: [],
  },
};

const envelope = (message: string, param: string | null) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });

/** What the batch path (parseBody) says of a body: the refusal, or null when it passes. */
function batchVerdict(schema: TSchema, body: unknown): [string, string | null] | null {
  try {
    parseBody(schema, body);
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return [err.message, err.param];
  }
}

describe.each(Object.entries(fronts))('the %s body', (_name, front) => {
  let app: FastifyInstance;
  let reached = 0;

  beforeAll(async () => {
    // AJV_OPTIONS as the app has them: a schema compiled by Fastify's own Ajv would name faults the same way.
    app = Fastify({ ajv: { customOptions: AJV_OPTIONS } });
    registerErrorHandling(app);
    app.post('/parse', { schema: { body: front.schema }, validatorCompiler: wireValidatorCompiler }, async (request) => {
      reached += 1;
      front.domain(request.body as never);
      return { accepted: true };
    });
    await app.ready();
  });
  afterAll(async () => app.close());

  const send = async (body: unknown) => {
    const before = reached;
    const res = await app.inject({ method: 'POST', url: '/parse', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    return { status: res.statusCode, body: res.json(), reachedHandler: reached > before };
  };

  it.each(front.refused.map((r) => [JSON.stringify(r[0]).slice(0, 120), ...r]))('refuses %s on the route and on a batch line', async (_label, body, message, param) => {
    expect(batchVerdict(front.schema, body)).toEqual([message, param]);
    expect(await send(body)).toEqual({ status: 400, body: envelope(message as string, param as string | null), reachedHandler: false });
  });

  it.each(front.accepted.map((body) => [JSON.stringify(body).slice(0, 120), body]))('accepts %s', async (_label, body) => {
    expect(batchVerdict(front.schema, body)).toBeNull();
    expect(await send(body)).toEqual({ status: 200, body: { accepted: true }, reachedHandler: true });
  });

  it.each(front.leftToDomain.map((r) => [JSON.stringify(r[0]), ...r]))('lets %s through to the domain', async (_label, body, message, param) => {
    expect(batchVerdict(front.schema, body)).toBeNull();
    expect(await send(body)).toEqual({ status: 400, body: envelope(message as string, param as string | null), reachedHandler: true });
  });
});

describe('compiled once', () => {
  it('the route is handed the same compiled function a batch line runs', () => {
    for (const front of Object.values(fronts)) expect(wireValidatorCompiler({ schema: front.schema })).toBe(validatorOf(front.schema));
  });
});
