extension LoginLanguage {
    /// The Simplified Chinese texts.
    static let simplifiedChineseTable: [MessageKey: String] = [
        .usernameLabel: "用户名",
        .passwordLabel: "密码",
        .logInButton: "登录",
        .rememberUsernameLabel: "记住用户名",
        .signedInAs: "已登录：{account}",
        .logOutButton: "退出登录",
        .loggingIn: "正在登录…",
        .retryCountdown: "请在 {seconds} 秒后重试。",
        .invalidCredentials: "用户名或密码不正确。",
        .accountLocked: "此账户已被锁定。请联系管理员或稍后再试。",
        .rateLimited: "尝试次数过多。请稍候再试。",
        .networkUnreachable: "无法连接到服务器。请检查您的网络连接。",
        .timedOut: "服务器响应超时。请重试。",
        .serverError: "服务器出现问题。请稍后再试。",
        .malformedResponse: "无法识别服务器的响应。请稍后再试。",
        .sessionNotSaved: "您已登录，但无法在此设备上保存会话。下次需要重新登录。",
    ]
}
