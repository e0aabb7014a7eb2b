package nats_test

const childEnv = "ORDERGEN_NATS_CHILD"
