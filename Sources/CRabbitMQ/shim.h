#ifndef PUSHWORKER_CRABBITMQ_SHIM_H
#define PUSHWORKER_CRABBITMQ_SHIM_H
// rabbitmq-c 0.11 keeps its headers at the top of the include path (0.12+ moved them under rabbitmq-c/).
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <amqp_ssl_socket.h>
#endif
