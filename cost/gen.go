package cost

// The default table is generated from LiteLLM's price file; see the package
// documentation, "Regenerating". go generate expands the variables from the
// environment.
//go:generate go run ./internal/gen -in ${LITELLM_JSON} -commit ${LITELLM_COMMIT} -date ${LITELLM_DATE} -out table_gen.go
