// Package slot is Colony's slab of actor slots and the packed atomic word
// (generation:32 | epoch:24 | state:8) whose CAS transitions decide who owns
// an actor. No other package touches a word except through the named
// transitions here. See word.go for the state machine and its rules.
package slot
