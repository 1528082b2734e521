// Package promptguard keeps untrusted text from steering a model. Quoter
// marks the lines of a message that read as a prompt's own structure (a
// section header, a message block), so that a prompt builder can put
// message text into a prompt without it forging sections or messages;
// InstructionHarm tells whether an instruction asks an assistant to reveal
// secrets, run downloaded code, deceive its user or hide things from them,
// so that such text is never kept as a standing instruction.
package promptguard
