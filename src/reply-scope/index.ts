export { AFTER_REPLY_MAX_WAIT_MS, afterReply, ReplyScope, untilReplied } from "./reply-scope.js";
