package record

import "encoding/json"

// heldRecord is a Record as the history holds it, in about half of a
// Record's room: the fields a recorder's record usually leaves empty are
// kept apart (rareFields), allocated only for a record that sets one. A
// history holds a thousand records, most of them a few hundred bytes of
// text each, and a Record is over 600 bytes of fields before any text.
//
// Every field of Record is in heldRecord or rareFields, and hold and
// record copy each of them both ways: TestMemoryKeepsEveryField sets each
// field alone and reads it back, so a field added to Record and not here
// fails it.
type heldRecord struct {
	CallID, Timestamp, Speaker, MethodName, TraceID, Model, ServerAddress string

	Args, Kwargs json.RawMessage
	Outcome      Outcome
	Output       *Message
	// outputIn is the answer's encoding inside what the next record of
	// the trace adds to its args (its argsNode's rest), once that record
	// came and carried it back: the answer then held once, Output nil,
	// read again from these bytes (Memory.add).
	outputIn []byte

	Depth                   *int
	Usage                   *Usage
	Cost                    *Cost
	DurationMS              float64
	TimeToFirstChunkMS      float64
	Attempts                int
	ServerPort              int
	ConversationHistorySize int
	Version                 int
	HistoryQueryPatterns    []string

	TraceInferred, HistoryRecordAppended, HistoryAccessDetected bool

	rare *rareFields
}

// rareFields are the fields of a Record that a recorder's record usually
// leaves empty.
type rareFields struct {
	ArgsPrefix        *ArgsPrefix
	ParentCallID      string
	UserID            string
	Tags              []string
	Metadata          map[string]string
	ErrorType         string
	ErrorMessage      string
	ProgramSource     string
	ServiceTier       string
	SystemFingerprint string
	Truncated         []string
	Hops              int
	ArtifactHit       bool
	HistoryGuidance   bool
}

// hold returns r as the history holds it (r's slices shared, not copied).
func hold(r *Record) heldRecord {
	h := heldRecord{
		CallID: r.CallID, Timestamp: r.Timestamp, Speaker: r.Speaker, MethodName: r.MethodName,
		TraceID: r.TraceID, Model: r.Model, ServerAddress: r.ServerAddress,
		Args: r.Args, Kwargs: r.Kwargs, Outcome: r.Outcome, Output: r.Output,
		Depth: r.Depth, Usage: r.Usage, Cost: r.Cost,
		DurationMS: r.DurationMS, TimeToFirstChunkMS: r.TimeToFirstChunkMS,
		Attempts: r.Attempts, ServerPort: r.ServerPort, ConversationHistorySize: r.ConversationHistorySize,
		Version: r.Version, HistoryQueryPatterns: r.HistoryQueryPatterns,
		TraceInferred: r.TraceInferred, HistoryRecordAppended: r.HistoryRecordAppended, HistoryAccessDetected: r.HistoryAccessDetected,
	}
	rare := rareFields{
		ArgsPrefix: r.ArgsPrefix, ParentCallID: r.ParentCallID, UserID: r.UserID, Tags: r.Tags, Metadata: r.Metadata,
		ErrorType: r.ErrorType, ErrorMessage: r.ErrorMessage, ProgramSource: r.ProgramSource,
		ServiceTier: r.ServiceTier, SystemFingerprint: r.SystemFingerprint, Truncated: r.Truncated,
		Hops: r.Hops, ArtifactHit: r.ArtifactHit, HistoryGuidance: r.HistoryGuidance,
	}
	if !rare.empty() {
		h.rare = &rare
	}
	return h
}

func (f *rareFields) empty() bool {
	return f.ArgsPrefix == nil && f.ParentCallID == "" && f.UserID == "" && f.Tags == nil && f.Metadata == nil &&
		f.ErrorType == "" && f.ErrorMessage == "" && f.ProgramSource == "" &&
		f.ServiceTier == "" && f.SystemFingerprint == "" && f.Truncated == nil &&
		f.Hops == 0 && !f.ArtifactHit && !f.HistoryGuidance
}

// record returns the Record h holds (its slices shared, not copied).
func (h *heldRecord) record() Record {
	r := Record{
		CallID: h.CallID, Timestamp: h.Timestamp, Speaker: h.Speaker, MethodName: h.MethodName,
		TraceID: h.TraceID, Model: h.Model, ServerAddress: h.ServerAddress,
		Args: h.Args, Kwargs: h.Kwargs, Outcome: h.Outcome, Output: h.Output,
		Depth: h.Depth, Usage: h.Usage, Cost: h.Cost,
		DurationMS: h.DurationMS, TimeToFirstChunkMS: h.TimeToFirstChunkMS,
		Attempts: h.Attempts, ServerPort: h.ServerPort, ConversationHistorySize: h.ConversationHistorySize,
		Version: h.Version, HistoryQueryPatterns: h.HistoryQueryPatterns,
		TraceInferred: h.TraceInferred, HistoryRecordAppended: h.HistoryRecordAppended, HistoryAccessDetected: h.HistoryAccessDetected,
	}
	if h.Output == nil && h.outputIn != nil {
		answer := MessageOf(h.outputIn)
		r.Output = &answer
	}
	if f := h.rare; f != nil {
		r.ArgsPrefix, r.ParentCallID, r.UserID, r.Tags, r.Metadata = f.ArgsPrefix, f.ParentCallID, f.UserID, f.Tags, f.Metadata
		r.ErrorType, r.ErrorMessage, r.ProgramSource = f.ErrorType, f.ErrorMessage, f.ProgramSource
		r.ServiceTier, r.SystemFingerprint, r.Truncated = f.ServiceTier, f.SystemFingerprint, f.Truncated
		r.Hops, r.ArtifactHit, r.HistoryGuidance = f.Hops, f.ArtifactHit, f.HistoryGuidance
	}
	return r
}

// payload is what the record's text takes, counted against
// MemoryOptions.MaxBytes.
func (h *heldRecord) payload() int64 {
	n := len(h.Args) + len(h.Kwargs) + h.Output.size()
	if f := h.rare; f != nil {
		n += len(f.ProgramSource) + len(f.ErrorMessage)
	}
	return int64(n)
}
