#ifndef PUSHWORKER_CRABBITMQ_SHIM_H
#define PUSHWORKER_CRABBITMQ_SHIM_H
// rabbitmq-c 0.11 keeps its headers at the top of the include path (0.12+ moved them under rabbitmq-c/).
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <amqp_ssl_socket.h>

// amqp_login_with_properties is variadic (the SASL arguments), which Swift cannot call.
static inline amqp_rpc_reply_t pushworker_amqp_login_plain(
    amqp_connection_state_t state, char const *vhost, int channel_max, int frame_max, int heartbeat,
    const amqp_table_t *client_properties, char const *user, char const *password) {
  return amqp_login_with_properties(state, vhost, channel_max, frame_max, heartbeat, client_properties,
                                    AMQP_SASL_METHOD_PLAIN, user, password);
}
#endif
