package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Tool is a function the model may call.
type Tool struct {
	Definition openai.FunctionDefinition
	Run        func(ctx context.Context, arguments string) (string, error)
}

// Agent answers a question in two steps: it asks the model, runs the
// tools the model asks for, and asks again with their results, streaming
// the final answer.
type Agent struct {
	Client *openai.Client
	Model  string
	Tools  []Tool
}

// Ask answers question. onToken, if not nil, gets the final answer as it
// streams in.
func (a *Agent) Ask(ctx context.Context, question string, onToken func(string)) (string, error) {
	messages := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a weather assistant. Use the get_weather tool, then answer in one sentence."},
		{Role: openai.ChatMessageRoleUser, Content: question},
	}
	var tools []openai.Tool
	for _, t := range a.Tools {
		tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &t.Definition})
	}
	resp, err := a.Client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: a.Model, Messages: messages, Tools: tools})
	if err != nil {
		return "", fmt.Errorf("asking the model: %w", err)
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("the model gave no choice")
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) == 0 { // answered without the tool
		if onToken != nil {
			onToken(msg.Content)
		}
		return msg.Content, nil
	}
	messages = append(messages, msg)
	for _, call := range msg.ToolCalls {
		out, err := a.run(ctx, call)
		if err != nil {
			out = "error: " + err.Error()
		}
		messages = append(messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: out})
	}
	// The tools have answered: ask again, and stream the answer.
	return a.stream(ctx, messages, onToken)
}

func (a *Agent) run(ctx context.Context, call openai.ToolCall) (string, error) {
	for _, t := range a.Tools {
		if t.Definition.Name == call.Function.Name {
			return t.Run(ctx, call.Function.Arguments)
		}
	}
	return "", fmt.Errorf("no tool %q", call.Function.Name)
}

func (a *Agent) stream(ctx context.Context, messages []openai.ChatCompletionMessage, onToken func(string)) (string, error) {
	s, err := a.Client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: a.Model, Messages: messages, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return "", fmt.Errorf("asking the model again: %w", err)
	}
	defer s.Close()
	var answer strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return answer.String(), nil
		}
		if err != nil {
			return answer.String(), fmt.Errorf("reading the answer: %w", err)
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				answer.WriteString(c.Delta.Content)
				if onToken != nil {
					onToken(c.Delta.Content)
				}
			}
		}
	}
}

// Weather is the example's tool: a fixed forecast, so that the answer the
// model gives from it can be checked.
func Weather(calls *[]string) Tool {
	return Tool{
		Definition: openai.FunctionDefinition{
			Name:        "get_weather",
			Description: "The current weather in a city.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city, e.g. Paris"}},"required":["city"]}`),
		},
		Run: func(_ context.Context, arguments string) (string, error) {
			var args struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal([]byte(arguments), &args); err != nil {
				return "", fmt.Errorf("arguments %q: %w", arguments, err)
			}
			if calls != nil {
				*calls = append(*calls, args.City)
			}
			return fmt.Sprintf(`{"city":%q,"temperature_c":18,"conditions":"light rain"}`, args.City), nil
		},
	}
}
