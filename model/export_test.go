package model

// For the external tests (package model_test), which may import catalogue.
var (
	ClientFaultsLeft   = clientFaultsLeft
	ClientFaultActions = clientFaultActions
	MainStep           = mainStep
)
