package redacttest

import "strings"

// j joins parts.
func j(parts ...string) string { return strings.Join(parts, "") }

// Case is one secret in a sentence.
type Case struct {
	Name string
	// Text is a sentence holding the secret.
	Text string
	// Secrets are strings of Text that must not survive redaction.
	Secrets []string
	// Kind is the marker's kind: "[REDACTED:<Kind>]" takes the secret's place.
	Kind string
	// Keep is context around the secret that redaction must keep.
	Keep []string
}

// Cases returns every shape, a realistic (fake) sample of each, built at
// run time from parts so the repository holds no string a secret scanner
// would flag.
func Cases() []Case {
	openaiLegacy := j("sk-", "Zq8xLm3NvB7cT1kR9wYp", "F4hJ6dS2aG5eQ0uI8oPzXcVb")
	openaiProj := j("sk-", "proj-", "Xy7_kL2mN9-pQ4rS8tU1vW6xY3zA5bC0dE", "fG7hJ2kL9mN4pQ8rS1tU6vW3x")
	anthropic := j("sk-", "ant-", "api03-", "Rt5Yu8Io2Pa6Sd9Fg3Hj7Kl1Zx4Cv0Bn", "Mq2We5Rt8Yu1Io4Pa7Sd0Fg3Hj6Kl9Zx2Cv5Bn8MqAA")
	awsID := j("AKIA", "IOSFODNN7EXAMPLE")
	awsSession := j("ASIA", "Y3NJ4KDPXQ7TLM2B")
	awsSecret := j("wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYEXAMPLEKEY")
	ghp := j("ghp_", "R8tY2uI5oP9aS3dF6gH1jK4lZ7xC0vB2nM5q")
	gho := j("gho_", "16C7e42F292c6912E7710c838347Ae178B4a")
	ghPAT := j("github_", "pat_", "11ABCDEFG0123456789abc_", "defGHIJKLmnopQRSTuvwxYZ0123456789abcdefGHIJKLmnopQRSTuvwx")
	xoxb := j("xox", "b-", "2468013579-1357924680135-", "Zx9Cv8Bn7Mq6We5Rt4Yu3Io2")
	xapp := j("xapp", "-1-", "A02ABCDEF9J-4567890123456-", "0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	webhook := j("https://hooks.slack", ".com/services/", "T024BE7LD/B0A1B2C3D4E/", "Qw3Er5Ty7Ui9Op1As3Df5Gh7")
	jwt := j("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ", ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
	pemBody := "MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+\nb4HnWnQGYpL2mSqUqJg5P8fZ3Xy0y3ZHm2dX5VvO6DRSXH4d1cJQm0r8WmDoRrAA\nLpFhcXvX9rGAhOa3aO9aQ1f1ZfW7dFJqNnUJ0nZQ6kbu0r3KuyJrXJ0yqJ7a1QIDAQAB"
	pem := j("-----BEGIN RSA ", "PRIVATE KEY-----\n", pemBody, "\n-----END RSA ", "PRIVATE KEY-----")
	sshBody := "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDq0nMmJ4oWQ5vY7Yq3XyZ8r2y8d6rR9h2xW1f4z9jK7AAAAJgq1b2Kqd"
	sshCut := j("-----BEGIN OPENSSH ", "PRIVATE KEY-----\n", sshBody)
	bearer := j("ya29", ".a0AfB_byC7kLmN3pQrStUvWxYz0123456789AbCdEf")
	google := j("AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY")
	stripe := j("sk_", "live_", "51H8xYzAbCdEf", "GhIjKlMnOpQr0123")
	stripeRK := j("rk_", "live_", "51H8xYz9QwErTy", "UiOpAsDf4567")
	glpat := j("glpat-", "xY7zK2mN9pQ4rS8tU1vW")
	npm := j("npm_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
	hf := j("hf_", "kLmNoPqRsTuVwXyZ0123456789AbCdEfGh")
	dbPass := "Tr0ub4dor&3x" // '&' ends an unquoted value, so only the part before it goes in a URL
	urlPass := "s3cr3t-P@ssw0rd"
	cases := []Case{
		{"openai legacy key", "I set OPENAI_API_KEY=" + openaiLegacy + " in my shell and it worked.", []string{openaiLegacy}, "openai_key", []string{"OPENAI_API_KEY="}},
		{"openai project key", "Use this key: " + openaiProj + ", it belongs to the staging project.", []string{openaiProj}, "openai_key", []string{"Use this key: ", ", it belongs"}},
		{"anthropic key", `client = Anthropic(api_key="` + anthropic + `")`, []string{anthropic}, "anthropic_key", []string{"client = Anthropic(api_key="}},
		{"aws access key id", "The IAM user has access key " + awsID + " attached.", []string{awsID}, "aws_access_key", []string{"has access key "}},
		{"aws session key id", "export AWS_ACCESS_KEY_ID=" + awsSession, []string{awsSession}, "aws_access_key", []string{"AWS_ACCESS_KEY_ID="}},
		{"aws secret", "[default]\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1", []string{awsSecret}, "aws_secret", []string{"aws_secret_access_key = ", "region = eu-west-1"}},
		{"github classic token", "git clone https://" + ghp + "@github.com/acme/app.git failed", []string{ghp}, "github_token", []string{"github.com/acme/app.git"}},
		{"github oauth token", "gh auth status shows token " + gho + " for octocat", []string{gho}, "github_token", []string{"for octocat"}},
		{"github fine-grained pat", "GITHUB_TOKEN: " + ghPAT, []string{ghPAT}, "github_token", []string{"GITHUB_TOKEN: "}},
		{"slack bot token", "The bot posts with " + xoxb + " into #alerts.", []string{xoxb}, "slack_token", []string{"into #alerts."}},
		{"slack app token", "SLACK_APP_TOKEN=" + xapp, []string{xapp}, "slack_token", nil},
		{"slack webhook", "Alerts go to " + webhook + " every hour.", []string{webhook, "Qw3Er5Ty7Ui9Op1As3Df5Gh7"}, "slack_webhook", []string{"Alerts go to ", " every hour."}},
		{"jwt", "The session cookie was " + jwt + "; it expires tomorrow.", []string{jwt, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}, "jwt", []string{"; it expires tomorrow."}},
		{"pem private key", "Here is the deploy key:\n" + pem + "\nPlease rotate it.", []string{pemBody, "MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+"}, "private_key", []string{"Here is the deploy key:\n", "\nPlease rotate it."}},
		{"pem private key cut short", "cat ~/.ssh/id_ed25519 prints\n" + sshCut, []string{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"}, "private_key", []string{"cat ~/.ssh/id_ed25519 prints\n"}},
		{"pem in json string", `{"key": "` + strings.ReplaceAll(pem, "\n", `\n`) + `"}`, []string{"MIIEowIBAAKCAQEA2a2rwplBQLzHPZe5RJr9vAiYG2rHAqXhBLMnFz0VCc7ezH0+"}, "private_key", []string{`{"key": "`}},
		{"indented encrypted pem", "tls:\n  key: |\n    " + j("-----BEGIN ENCRYPTED ", "PRIVATE KEY-----") + "\n    MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq1zX\n    AgIIADAMBggqhkiG9w0CCQUAMBQGCCqGSIb3DQMHBAjL\n    " + j("-----END ENCRYPTED ", "PRIVATE KEY-----") + "\n  cert: server.crt", []string{"MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIq1zX", "AgIIADAMBggqhkiG9w0CCQUAMBQGCCqGSIb3DQMHBAjL"}, "private_key", []string{"tls:\n  key: |\n    ", "\n  cert: server.crt"}},
		{"bearer header", "curl -H 'Authorization: Bearer " + bearer + "' https://api.example.com/v1/me", []string{bearer}, "bearer", []string{"Authorization: Bearer ", "https://api.example.com/v1/me"}},
		{"basic auth header", "Authorization: Basic " + j("YWxhZGRpbjpv", "cGVuc2VzYW1l"), []string{j("YWxhZGRpbjpv", "cGVuc2VzYW1l")}, "basic_auth", []string{"Authorization: Basic "}},
		{"url password", "DATABASE_URL=postgres://app_user:" + urlPass + "@db.internal:5432/prod", []string{urlPass, "P@ssw0rd"}, "url_password", []string{"postgres://app_user:", "@db.internal:5432/prod"}},
		{"google api key", "maps.googleapis.com/maps/api/js?key=" + google + "&callback=init", []string{google}, "google_api_key", []string{"&callback=init"}},
		{"stripe secret key", "Stripe.api_key = '" + stripe + "'", []string{stripe}, "stripe_key", []string{"Stripe.api_key = '"}},
		{"stripe restricted key", "the webhook uses " + stripeRK, []string{stripeRK}, "stripe_key", nil},
		{"gitlab token", "PRIVATE-TOKEN: " + glpat, []string{glpat}, "gitlab_token", nil},
		{"npm token", "//registry.npmjs.org/:_authToken=" + npm, []string{npm}, "npm_token", []string{"//registry.npmjs.org/:_authToken="}},
		{"huggingface token", "huggingface-cli login --token " + hf, []string{hf}, "huggingface_token", []string{"huggingface-cli login --token "}},
		{"password assignment", "mysql -u root --password=" + dbPass + " -h localhost", []string{"Tr0ub4dor"}, "password", []string{"--password=", " -h localhost"}},
		{"json password", `{"username": "alice", "password": "` + j("c0rrect-H0rse", "-battery") + `"}`, []string{j("c0rrect-H0rse", "-battery")}, "password", []string{`"username": "alice"`, `"password": "`}},
		{"yaml client secret", "oauth:\n  client_id: my-app\n  client_secret: " + j("9f8e7d6c5b4a", "39281706f5e4d3c2") + "\n", []string{j("9f8e7d6c5b4a", "39281706f5e4d3c2")}, "generic_api_key", []string{"client_id: my-app", "client_secret: "}},
		{"token assignment", "set SESSION_TOKEN=" + j("f3a9c1e7", "b2d4068a5c7e9f1b") + " before running", []string{j("f3a9c1e7", "b2d4068a5c7e9f1b")}, "generic_api_key", []string{"SESSION_TOKEN=", " before running"}},
		{"escaped json api key", `{\"api_key\": \"` + j("AbCd3fGh1j", "KlMn0pQrSt") + `\"}`, []string{j("AbCd3fGh1j", "KlMn0pQrSt")}, "generic_api_key", []string{`{\"api_key\": \"`}},
	}
	return append(cases, moreCases()...)
}

// hex40 and friends are fake key material, split so that no scanner sees a
// whole key in the source.
var (
	hex32 = j("9f86d081884c7d65", "9a2feaa0c55ad015")
	hex40 = j("3c7b1e2f9a8d6c5b4a39", "2817f6e5d4c3b2a19087")
	hex64 = j("a3f1c9e87b6d5a4f3e2d1c0b9a8f7e6d", "5c4b3a29180f7e6d5c4b3a2918a7b6c5")
	b64   = j("Zk3qT9vX2mLp8RwN4sYb6HcJ1dGf5KaE", "7uIo0PzQxCvBnM3lKjHgFdSaWeRtYuIoPl", "kJhGfDsA9qWeRtYuIoPlKjHgFdSaZx0==")
)

// moreCases are the shapes beyond the first thirty: cloud, CI, database,
// payment and chat credentials, and passwords given in words.
func moreCases() []Case {
	sendgrid := j("SG.", "ngeVfQFYQlKU0ufo8x5d1A", ".", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr")
	doPAT := j("dop_", "v1_", hex64)
	doOAuth := j("doo_", "v1_", hex64)
	azureKey := b64[:86] + "=="
	sbKey := j("Xk2mN9pQ4rS8tU1vW6xY3zA5", "bC0dEfG7hJ2kL9m=")
	sasSig := j("h8kN2mQ4pR6sT8vX0zB2dF4", "hJ6lN8pR0tV2xZ4%2Bb6D8%3D")
	twilioSK := j("SK", hex32)
	twilioAC := j("AC", hex32[:16], "0a1b2c3d4e5f6a7b")
	mailgun := j("key-", hex32)
	pypi := j("pypi-", "AgEIcHlwaS5vcmcCJGE4ZjQ3ZDY1LTkxYjYtNDc3Yi05NzM2", "LWVhY2JlZTE4YWI1NgACKlszLCJiOTY0ZDA3Ni04")
	heroku := j("HRKU-", "AAx8Yj2mQ9pL4rT7vW1zB5nC3kD6fG0hJ_", "aSdFgHjK")
	herokuUUID := j("5d41402a", "-bc4b-2a76-b971-9d911017c592")
	shopify := j("shpat_", hex32)
	squareATP := j("sq0atp-", "4xKf9Q2mLp7RwN3sYb8HcA")
	squareEAAA := j("EAAA", "l9Kx3mQ7pR2sT5vX8zB1dF4hJ6lN9pR2tV5xZ8bD1fH4jL7nP0rT3vX6zB9dF2hJ5", "lN8pR1t")
	braintree := j("access_token$", "production$", "x7k2m9q4p8r3s6t1$", hex32)
	vault := j("hvs.", "CAESIJlWh3kQ9mXp2Lr8Tz5Vb7Nc4Yd1Fg6Hj0Ka", "GiEKHGh2cy5tT3ZpRXlXQ2RmR3hZ")
	tfc := j("xK9mQ2pL7rT4vW", ".atlasv1.", "z8B3nC6kD1fG5hJ0aSdFgHjKlQwErTyUiOpZxCvBnM1234567890abcdefGHIJklmn")
	docker := j("dckr_pat_", "2YotnFZFEjr1zCsicMWpAAbc3DeF")
	circle := j("CCIPAT_", "4xKf9Q2mLp7RwN3sYb8HcA_", hex40)
	glcbt := j("glcbt-", "64_", "xY7zK2mN9pQ4rS8tU1vW")
	glrt := j("glrt-", "t3_", "Qw7eR2tY9uI4oP8aS1dF")
	grafana := j("glsa_", "pL7rT4vWz8B3nC6kD1fG5hJ0aSdFgHjK", "_", "1a2b3c4d")
	datadogAPI := hex32
	datadogApp := hex40
	sentryKey := j("e3b0c44298fc1c14", "9afbf4c8996fb924")
	sentryOrg := j("sntrys_", "eyJpYXQiOjE3MTAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnkuaW8i", "fQ_Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9m")
	tgSecret := j("AA", "Hdqx7mPz3KL9rT2vWq5YbN8cJ4sF6gH1kD")
	discord := j("MTk4NjIyNDgzNDcxOTI1MjQ4", ".", "Cl2FMQ", ".", "ZnCjm1XVW7vRze4b7Cq4se7kKWs")
	discordHook := j("discord.com/api/webhooks/", "1187654321098765432", "/", "Qw7eR2tY9uI4oP8aS1dF6gH3jK5lZ0xCvB7nM2qW9eR4tY8uI1oP6aS3dF0gH")
	visa := j("4111", " 1111 ", "1111 1111")
	mastercard := j("5555", "5555", "5555", "4444")
	amex := j("3782", "-822463-", "10005")
	discover := j("6011", "0009", "9013", "9424")
	age := j("AGE-SECRET-KEY-", "1QQ8ZQZJ9X5Y7K6RHG2CTN0LPS4VF3WMD8E9A2B7UKXQZRJMN5T4YH")
	postman := j("PMAK-", "6543210fedcba9876543210f", "-", "0123456789abcdef0123456789abcdef01")
	linear := j("lin_api_", "Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9mQ")
	newrelic := j("NRAK-", "7XK2MN9PQ4RS8TU1VW6XY3ZA5BC")
	supabase := j("sbp_", hex40)
	databricks := j("dapi", hex32)
	doppler := j("dp.pt.", "Xk2mN9pQ4rS8tU1vW6xY3zA5bC0dEfG7hJ2kL9mQ4rS")
	pulumi := j("pul-", hex40)
	whsec := j("whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	ghs := j("ghs_", "16C7e42F292c6912E7710c838347Ae178B4a")
	glpat := j("glpat-", "Zx9Cv8Bn7Mq6We5Rt4Yu")
	mongoPass := j("Mq6We5", "Rt4Yu")
	redisPass := j("r3d1s", "-S3cret")
	mysqlPass := j("my5ql", "Pass")
	basicPass := j("ci-b0t", "-pw")
	wordsPass := j("hunter", "2")
	wifiPass := j("Tr0ub4dor", "!x")
	zhPass := j("hunter", "2024")
	zhPass2 := j("Xk9#mP", "2q")
	passwd := j("9mQ4rS", "8tU1v")
	secretAssign := j("a8F3kL9q", "Z2xW7vB1")
	return []Case{
		{"sendgrid key", "SENDGRID_API_KEY=" + sendgrid + " # mail", []string{sendgrid, "TwL2iGABf9DHoTf"}, "sendgrid_key", []string{" # mail"}},
		{"digitalocean token", "doctl auth init -t " + doPAT, []string{doPAT, hex64}, "digitalocean_token", []string{"doctl auth init -t "}},
		{"digitalocean oauth token", "the droplet script used " + doOAuth + " yesterday", []string{hex64}, "digitalocean_token", []string{" yesterday"}},
		{"azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", []string{azureKey, azureKey[:40]}, "azure_key", []string{"AccountName=acme;AccountKey=", ";EndpointSuffix=core.windows.net"}},
		{"azure service bus key", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + sbKey, []string{sbKey}, "azure_key", []string{"SharedAccessKeyName=RootManageSharedAccessKey;"}},
		{"azure sas url", "download https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=" + sasSig + " now", []string{sasSig, "h8kN2mQ4pR6sT8vX0zB2dF4"}, "azure_sas", []string{"&sig=", " now"}},
		{"gcp private key id", `{"type": "service_account", "project_id": "acme-prod", "private_key_id": "` + hex40 + `", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}`, []string{hex40}, "gcp_private_key_id", []string{`"project_id": "acme-prod"`, `"client_email"`}},
		{"gcp service account private key", `{"private_key_id": "` + hex40 + `", "private_key": "` + j("-----BEGIN ", "PRIVATE KEY-----") + `\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n` + j("-----END ", "PRIVATE KEY-----") + `\n"}`, []string{hex40, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"}, "private_key", []string{`"private_key": "`}},
		{"password in words", "btw my password is " + wordsPass + ". Don't tell anyone", []string{wordsPass}, "password", []string{"my password is ", ". Don't tell anyone"}},
		{"password in a longer sentence", "The wifi password for the office is " + wifiPass + ", ask Bob for the guest one.", []string{wifiPass}, "password", []string{"The wifi password for the office is ", ", ask Bob"}},
		{"password in chinese", "我的密码是" + zhPass + "，别告诉别人", []string{zhPass}, "password", []string{"我的密码是", "，别告诉别人"}},
		{"password in chinese with colon", "数据库密码：" + zhPass2 + " 请保管好", []string{zhPass2}, "password", []string{"数据库密码：", " 请保管好"}},
		{"passwd yaml", "db:\n  user: app\n  passwd: " + passwd + "\n", []string{passwd}, "password", []string{"user: app", "passwd: "}},
		{"secret assignment", "APP_SECRET=" + secretAssign + " ./run", []string{secretAssign}, "generic_api_key", []string{"APP_SECRET=", " ./run"}},
		{"twilio api key", "TWILIO_API_KEY_SID " + twilioSK + " is used by the notifier", []string{twilioSK}, "twilio_key", []string{" is used by the notifier"}},
		{"twilio account sid", "twilio account " + twilioAC + " sends the SMS", []string{twilioAC}, "twilio_sid", []string{" sends the SMS"}},
		{"mailgun key", "curl -s --user 'api:" + mailgun + "' https://api.mailgun.net/v3/x", []string{mailgun}, "mailgun_key", []string{"https://api.mailgun.net/v3/x"}},
		{"pypi token", "twine upload -u __token__ -p " + pypi + " dist/*", []string{pypi}, "pypi_token", []string{" dist/*"}},
		{"heroku token", "heroku auth:token printed " + heroku, []string{heroku}, "heroku_key", []string{"heroku auth:token printed "}},
		{"heroku api key", "HEROKU_API_KEY=" + herokuUUID, []string{herokuUUID}, "generic_api_key", []string{"HEROKU_API_KEY="}},
		{"shopify token", "X-Shopify-Access-Token: " + shopify, []string{shopify}, "shopify_token", nil},
		{"square access token", "SQUARE_TOKEN " + squareATP + " for the sandbox", []string{squareATP}, "square_token", []string{" for the sandbox"}},
		{"square eaaa token", "square says: " + squareEAAA, []string{squareEAAA}, "square_token", []string{"square says: "}},
		{"braintree paypal token", "braintree gateway = " + braintree, []string{braintree, hex32}, "braintree_token", []string{"braintree gateway = "}},
		{"vault token", "export VAULT_TOKEN " + vault, []string{vault}, "vault_token", nil},
		{"terraform cloud token", `credentials "app.terraform.io" { token = "` + tfc + `" }`, []string{tfc, "z8B3nC6kD1fG5hJ0aSdFgHjKl"}, "terraform_token", []string{`credentials "app.terraform.io"`}},
		{"docker hub token", "docker login -u acme -p " + docker, []string{docker}, "docker_token", []string{"docker login -u acme -p "}},
		{"circleci token", "Circle-Token: " + circle, []string{circle, hex40}, "circleci_token", nil},
		{"gitlab ci job token", "CI_JOB_TOKEN " + glcbt + " expires with the job", []string{glcbt}, "gitlab_token", []string{" expires with the job"}},
		{"gitlab runner token", "gitlab-runner register --token " + glrt, []string{glrt}, "gitlab_token", []string{"gitlab-runner register --token "}},
		{"gitlab personal token in url", "git remote add origin https://oauth2:" + glpat + "@gitlab.com/acme/app.git", []string{glpat}, "url_password", []string{"@gitlab.com/acme/app.git"}},
		{"grafana service account token", "GF token " + grafana, []string{grafana}, "grafana_token", nil},
		{"datadog api key", "DD_API_KEY=" + datadogAPI + " DD_SITE=datadoghq.eu", []string{datadogAPI}, "generic_api_key", []string{"DD_SITE=datadoghq.eu"}},
		{"datadog app key", "DD_APP_KEY: " + datadogApp, []string{datadogApp}, "generic_api_key", []string{"DD_APP_KEY: "}},
		{"sentry dsn", "SENTRY_DSN=https://" + sentryKey + "@o450123.ingest.sentry.io/5501234", []string{sentryKey}, "url_key", []string{"@o450123.ingest.sentry.io/5501234"}},
		{"sentry auth token", "SENTRY_AUTH_TOKEN " + sentryOrg, []string{sentryOrg}, "sentry_token", nil},
		{"telegram bot token", "bot = Bot('5678901234:" + tgSecret + "')", []string{tgSecret}, "telegram_token", []string{"bot = Bot('5678901234:"}},
		{"discord bot token", "client.login('" + discord + "')", []string{discord, "ZnCjm1XVW7vRze4b7Cq4se7kKWs"}, "discord_token", []string{"client.login('"}},
		{"discord webhook", "post to https://" + discordHook + " on deploy", []string{"Qw7eR2tY9uI4oP8aS1dF6gH3jK5lZ0xCvB7nM2qW9eR4tY8uI1oP6aS3dF0gH"}, "discord_webhook", []string{" on deploy"}},
		{"visa card", "Charge my card " + visa + ", exp 12/29, cvc 123", []string{visa, "1111 1111 1111"}, "card_number", []string{"Charge my card ", ", exp 12/29"}},
		{"mastercard", "card_number=" + mastercard, []string{mastercard}, "card_number", []string{"card_number="}},
		{"amex card", "Amex " + amex + " on file", []string{amex}, "card_number", []string{"Amex ", " on file"}},
		{"discover card", "pay with " + discover + ".", []string{discover}, "card_number", []string{"pay with ", "."}},
		{"stripe webhook secret", "STRIPE_WEBHOOK_SECRET " + whsec, []string{whsec}, "stripe_key", nil},
		{"github app token", "installation token " + ghs, []string{ghs}, "github_token", []string{"installation token "}},
		{"mongodb srv url", "MONGO_URL=mongodb+srv://admin:" + mongoPass + "@cluster0.ab1cd.mongodb.net/app?retryWrites=true", []string{mongoPass}, "url_password", []string{"mongodb+srv://admin:", "@cluster0.ab1cd.mongodb.net/app"}},
		{"redis url without user", "REDIS_URL=redis://:" + redisPass + "@cache.internal:6379/0", []string{redisPass}, "url_password", []string{"redis://:", "@cache.internal:6379/0"}},
		{"mysql url", "mysql://root:" + mysqlPass + "@127.0.0.1:3306/shop", []string{mysqlPass}, "url_password", []string{"mysql://root:", "@127.0.0.1:3306/shop"}},
		{"basic auth url", "Jenkins is at https://ci:" + basicPass + "@jenkins.acme.dev/job/x", []string{basicPass}, "url_password", []string{"@jenkins.acme.dev/job/x"}},
		{"age secret key", "# created: 2026-01-01\n" + age, []string{age}, "age_key", []string{"# created: 2026-01-01\n"}},
		{"postman key", "POSTMAN " + postman, []string{postman}, "postman_key", nil},
		{"linear key", "LINEAR " + linear, []string{linear}, "linear_key", nil},
		{"new relic key", "NEW_RELIC " + newrelic, []string{newrelic}, "newrelic_key", nil},
		{"supabase token", "supabase login --token " + supabase, []string{supabase}, "supabase_token", nil},
		{"databricks token", "databricks configure --token " + databricks, []string{databricks}, "databricks_token", nil},
		{"doppler token", "DOPPLER " + doppler, []string{doppler}, "doppler_token", nil},
		{"pulumi token", "pulumi login with " + pulumi, []string{pulumi}, "pulumi_token", nil},
	}
}
